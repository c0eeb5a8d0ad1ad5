"""The hub service's metrics, guarded as JupyterHub guards its own ``/hub/metrics``: a
token with the ``read:metrics`` scope, else 401 (no token) or 403, saying why; the
scrape read back by prometheus_client's parser (the session's hub, a service here)."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.gateway.test_metrics import samples
from tests.helpers.hub import HUB_ADMIN, Hub
from tests.helpers.tasks import start_task
from tests.server.test_gateway import YES, answer_path, register

pytestmark = pytest.mark.kernel


async def test_no_token_is_401_and_a_token_without_the_scope_403(api: Any, hub: Hub) -> None:
    status, body = await api("GET", "metrics", headers={"Authorization": ""})
    assert status == 401
    assert "read:metrics" in body["message"]
    status, body = await api("GET", "metrics", user=None)  # a token the hub does not know
    assert status == 403 and "unknown or expired" in body["message"]
    status, body = await api("GET", "metrics", user="alice")  # all of alice's scopes
    assert status == 403
    assert "does not carry the read:metrics scope" in body["message"]


async def test_a_read_metrics_token_scrapes_the_answers(
    api: Any, hub: Hub, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg = await register(api, agent.url, task.id)
    status, _ = await api("POST", answer_path(reg), user="bob", body={"payload": YES})
    assert status == 200
    token = hub.token(HUB_ADMIN, scopes=["read:metrics"])
    status, text = await api("GET", "metrics", headers={"Authorization": f"token {token}"})
    assert status == 200, text
    got = samples(text)
    assert got[("hitl_answers_total", (("outcome", "forwarded"),))] == 1
    assert got[("hitl_forwards_total", (("result", "forwarded"),))] == 1
    assert got[("hitl_answer_wait_seconds_count", ())] == 1
    assert ("hitl_prompts_open", (("kind", "any"), ("policy", "remind"))) in got
