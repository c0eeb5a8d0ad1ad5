"""A Slack click taken is never lost: a real Jupyter server killed with ``-9`` after it
told Slack the click was taken, before the answer reached the agent, then started
again on the same state: the agent gets exactly one answer, the message says so."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.jupyter_process import jupyter_server
from tests.helpers.jupyter_users import auth
from tests.helpers.slack import SECRET, TOKEN, click_body, fake_slack, sign
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


def _config(tmp: Path, api_url: str) -> dict[str, Any]:
    secret = tmp / "signing-secret"
    secret.write_text(SECRET)
    return {
        "HitlServer": {
            "state_dir": str(tmp / "state"),
            "notify_team_webhooks": {"*": {"kind": "slack-app", "channel": "C0TEAM"}},
            "notify_slack_token_env": "TEST_SLACK_TOKEN",
            "notify_slack_signing_secret_file": str(secret),
            "notify_slack_api_url": api_url,
            "notify_slack_match_email": True,
            "notify_address_template": "{name}@example.org",
            "notify_every": 0.0,
            # the dead process's replica counts as stopped after this
            "lease_seconds": 1.5,
        }
    }


@pytest.mark.timeout(240)
def test_a_click_acknowledged_then_killed_9_is_answered_once_after_the_restart(
    tmp_path: Path,
) -> None:
    procs: list[subprocess.Popen[bytes]] = []
    with (
        fake_slack(emails={"UDAVE": "dave@example.org"}) as slack,
        MockAgent(store=tmp_path / "agent.sqlite") as agent,
    ):
        config = _config(tmp_path, slack.api_url)
        env = {"TEST_SLACK_TOKEN": TOKEN}
        task = asyncio.run(start_task(agent.url, "approval"))
        with jupyter_server(
            tmp_path,
            ready_headers=auth("alice"),
            env=env,
            extra_config=config,
            started=procs.append,
        ) as url:
            r = httpx.post(
                url + "hitl/api/tasks",
                headers=auth("alice"),
                json={"agent_url": agent.url, "task_id": task.id},
            )
            assert r.status_code == 201, r.text
            (message,) = until(
                lambda: slack.called("chat.postMessage"), timeout=60, what="the Slack message"
            )
            (actions,) = [b for b in message["blocks"] if b["type"] == "actions"]
            yes = actions["elements"][0]
            # dave is found by his email: users.info is held, so the process is caught
            # after the acknowledgement and before the answer
            slack.users_info_gate.clear()
            body = click_body(yes, "UDAVE", slack.response_url())
            headers = sign(body)
            taken = httpx.post(url + "hitl/slack/interactions", content=body, headers=headers)
            assert taken.status_code == 200
            until(lambda: slack.called("users.info"), timeout=30, what="who dave is, asked")
            os.kill(procs[0].pid, signal.SIGKILL)
            procs[0].wait(30)
            slack.users_info_gate.set()
            time.sleep(0.5)
            assert asyncio.run(answers_at_agent(agent.url, task.id)) == []
        with jupyter_server(
            tmp_path, ready_headers=auth("alice"), env=env, extra_config=config
        ) as url:
            answers = until(
                lambda: asyncio.run(answers_at_agent(agent.url, task.id)),
                timeout=60,
                what="the answer at the agent",
            )
            assert answers[0]["payload"] == {"approve": True}

            def answered() -> list[dict[str, Any]]:
                return [u for u in slack.called("chat.update") if "Answered by dave" in u["text"]]

            (update, *_) = until(answered, timeout=60, what="the message updated")
            assert not [b for b in update["blocks"] if b["type"] == "actions"]
            # the replay of the same request, after the restart, is taken once only
            again = httpx.post(url + "hitl/slack/interactions", content=body, headers=headers)
            assert again.status_code == 200
            time.sleep(3)  # rounds of the restarted replica, which must not answer again
            assert len(asyncio.run(answers_at_agent(agent.url, task.id))) == 1
            thanks = [r for r in slack.responses if r.get("text", "").startswith("Thanks, dave")]
            assert len(thanks) == 1
