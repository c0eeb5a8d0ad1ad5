"""On a plain token server, every prompt of a kernel's cards reaches the server's gateway
(watched only: the cards still answer the agent directly), with the cell that shows it;
an answer given in another kernel through the gateway (as JupyterLab's prompts panel
gives it, hitl_nb.notebook.prompt_card) reaches the agent once and the first card says
what became of its prompt. hitl_nb/notebook/_announce.py, _prompt_card.py, and the
routes of hitl_nb/server/_lab.py they use."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.contract import conforms
from tests.helpers.jupyter_process import jupyter_server
from tests.helpers.server_kernel import result_of, server_kernel
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

TOKEN = "single-user-secret"
HEADERS = {"Authorization": f"token {TOKEN}"}

START = """
from hitl_nb.notebook import Conversation
chat = Conversation.start({agent!r}, "approval", poll_interval=0.5)
chat
"""

STATE = """
import json
card = chat.cards[-1]
print("RESULT" + json.dumps({
    "gateway": chat.gateway is not None,
    "watched": chat.watched[1] if chat.watched else None,
    "outcome": card.outcome.status if card.outcome else None,
    "message": card.outcome.message if card.outcome else None,
}))
"""

PANEL = """
import json
from hitl_nb.notebook import prompt_card
card = prompt_card({registration!r}, {prompt_id!r})
outcome = card.answer({{"approve": True}}, timeout=60)
print("RESULT" + json.dumps({{"status": outcome.status, "message": outcome.message}}))
"""


def _listing(url: str) -> dict[str, Any]:
    r = httpx.get(url + "hitl/lab/prompts", headers=HEADERS, timeout=30)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = conforms("Listing", r.json())
    return body


def test_a_direct_card_is_watched_shown_where_it_is_and_told_of_the_panels_answer(
    tmp_path: Path,
) -> None:
    with MockAgent() as agent:
        with jupyter_server(
            tmp_path, identity_provider=None, token=TOKEN, ready_headers=HEADERS
        ) as url:
            runtime = tmp_path / "runtime"
            with server_kernel(url, TOKEN, runtime) as notebook:
                notebook(START.format(agent=agent.url), cell_id="cell-of-the-card")
                state = until(
                    lambda: (s := result_of(notebook(STATE)))["watched"] and s,
                    what="the task registered with the gateway",
                )
                assert state["gateway"] is False  # the card answers the agent directly
                item = until(
                    lambda: next(iter(_listing(url)["items"]), None), what="the prompt listed"
                )
                assert item["registration"] == state["watched"] and item["may_answer"]
                place = until(
                    lambda: _listing(url)["items"][0].get("place"), what="the card's place"
                )
                assert place["cell_id"] == "cell-of-the-card"
                with server_kernel(url, TOKEN, runtime) as panel:
                    code = PANEL.format(
                        registration=item["registration"], prompt_id=item["prompt_id"]
                    )
                    answered = result_of(panel(code))
                assert answered["status"] == "accepted", answered
                told = until(
                    lambda: (s := result_of(notebook(STATE)))["outcome"] and s,
                    what="the first card's outcome",
                )
                assert told["outcome"] == "accepted", told
                assert (
                    "answered through the Jupyter server as the server's user" in (told["message"])
                )
                until(lambda: _listing(url)["items"] == [], what="the prompt leaving")
        answers = asyncio.run(answers_at_agent(agent.url, item["task_id"]))
    assert len(answers) == 1  # exactly once, through the gateway


def test_a_named_prompt_is_listed_but_the_panel_cannot_answer_it_here(tmp_path: Path) -> None:
    with MockAgent() as agent:
        task = asyncio.run(start_task(agent.url, "specific", responder="bob"))
        with jupyter_server(
            tmp_path, identity_provider=None, token=TOKEN, ready_headers=HEADERS
        ) as url:
            attach = (
                "from hitl_nb.notebook import Conversation\n"
                f"chat = Conversation.attach({agent.url!r}, {task.id!r}, poll_interval=0.5)\n"
            )
            with server_kernel(url, TOKEN, tmp_path / "runtime") as notebook:
                notebook(attach)
                item = until(
                    lambda: next(iter(_listing(url)["items"]), None), what="the prompt listed"
                )
                assert item["may_answer"] is False
                assert "cannot tell its users apart" in item["why_not"]
                code = PANEL.format(registration=item["registration"], prompt_id=item["prompt_id"])
                refused = result_of(notebook(code))
        assert refused["status"] == "refused", refused
        assert asyncio.run(answers_at_agent(agent.url, task.id)) == []
