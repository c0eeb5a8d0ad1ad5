"""A single server's metrics: jupyter-server's own ``/metrics`` (behind its login)
carries the gateway's, read back by prometheus_client's parser."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.gateway.test_metrics import samples
from tests.helpers.jupyter_users import auth
from tests.helpers.tasks import start_task
from tests.server.test_gateway import YES, answer_path, register

# A Jupyter server (jp_serverapp), as the gateway's other server tests.
pytestmark = pytest.mark.kernel


async def test_the_servers_metrics_include_the_gateways(
    api: Any, agent: MockAgent, jp_fetch: Any
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg = await register(api, agent.url, task.id)
    status, _ = await api("POST", answer_path(reg), user="bob", body={"payload": YES})
    assert status == 200
    resp = await jp_fetch("metrics", method="GET", headers=auth("alice"))
    got = samples(resp.body.decode())
    assert got[("hitl_answers_total", (("outcome", "forwarded"),))] == 1
    assert got[("hitl_forwards_total", (("result", "forwarded"),))] == 1
    assert got[("hitl_answer_wait_seconds_count", ())] == 1
    assert ("hitl_prompts_open", (("kind", "specific"), ("policy", "remind"))) in got
    # jupyter-server's own metrics are there too: one scrape for both.
    assert any(name.startswith("http_request_duration_seconds") for name, _ in got)
