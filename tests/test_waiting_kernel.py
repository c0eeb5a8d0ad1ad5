"""Waiting for a click in a real ipykernel cell: awaited, the click is handled while the
cell waits; blocking, the cell is told at once instead of hanging the kernel."""

from __future__ import annotations

import json
from queue import Empty

import pytest
from jupyter_client.blocking.client import BlockingKernelClient

from tests.helpers.kernel import kernel, run_queued
from tests.helpers.until import until

pytestmark = [pytest.mark.slow, pytest.mark.kernel]

SETUP = """
import json
from hitl_nb.forms import Form
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation
APPROVE = {"type": "object", "required": ["approved"],
           "properties": {"approved": {"type": "boolean"}}}
form = Form(APPROVE)
agent = MockAgent().start()
chat = Conversation.start(agent.url, {"scenario": "approval"})
card = chat.current
print(json.dumps({"form": [form.field("/approved").input.model_id, form.submit_button.model_id],
                  "card": [card.form.field("/approve").input.model_id,
                           card.form.submit_button.model_id]}))
"""


def _click_yes_and_submit(kc: BlockingKernelClient, ids: list[str]) -> None:
    """What a browser sends when the person picks "Yes" and clicks Submit."""
    for comm_id, data in (
        (ids[0], {"method": "update", "state": {"index": 0}, "buffer_paths": []}),
        (ids[1], {"method": "custom", "content": {"event": "click"}}),
    ):
        kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))


def _started(kc: BlockingKernelClient, msg_id: str) -> None:
    """Until the kernel says it runs the cell ``msg_id`` (its ``execute_input``)."""

    def running() -> bool:
        io = kc.get_iopub_msg(timeout=0.2)
        return io["parent_header"].get("msg_id") == msg_id and io["msg_type"] == "execute_input"

    until(running, timeout=60, what="the cell to start", interval=0, ignore=Empty)


def _reply(kc: BlockingKernelClient, msg_id: str, timeout: float) -> tuple[str, str]:
    """The cell's reply status and stdout."""

    def replied() -> str | None:
        msg = kc.get_shell_msg(timeout=0.2)
        return msg["content"]["status"] if msg["parent_header"].get("msg_id") == msg_id else None

    status = until(replied, timeout=timeout, what="the cell's reply", interval=0, ignore=Empty)
    out = ""
    while True:  # what the cell printed, all in by now
        try:
            io = kc.get_iopub_msg(timeout=0.2)
        except Empty:
            return status, out
        if io["parent_header"].get("msg_id") == msg_id and io["msg_type"] == "stream":
            out += io["content"]["text"]


def test_a_cell_awaits_a_click_and_a_blocking_wait_never_hangs_the_kernel() -> None:
    with kernel() as kc:
        (setup,) = run_queued(kc, [SETUP], timeout=90)
        assert setup.status == "ok", setup.error
        ids = json.loads(setup.stdout)
        # A blocking wait for a click: told at once, and the kernel goes on.
        blocked, after = run_queued(
            kc,
            [
                "try:\n    form.wait()\nexcept Exception as exc:\n"
                "    print(type(exc).__name__, '|', exc)",
                "print('the kernel still answers')",
            ],
            timeout=60,
        )
        assert blocked.stdout.startswith("ClickNeeded | a cell that blocks cannot"), blocked
        assert "await form.wait_async(timeout)" in blocked.stdout
        assert after.stdout == "the kernel still answers\n"
        # The awaited wait: the click comes in while the cell awaits (ipykernel 7.4).
        for name in ("form", "card"):
            cell = (
                f"got = await {name}.wait_async(timeout=30)\n"
                f"print(json.dumps(got) if {name!r} == 'form' else got.status)"
            )
            msg_id = kc.execute(cell)
            _started(kc, msg_id)  # the click comes once the cell runs
            _click_yes_and_submit(kc, ids[name])
            status, out = _reply(kc, msg_id, timeout=60)
            assert status == "ok", (name, out)
            assert out == ('{"approved": true}\n' if name == "form" else "accepted\n")
        # Once the outcome is in, the blocking wait returns it in a cell too.
        (again,) = run_queued(kc, ["print(card.wait(timeout=5).status, form.wait())"], timeout=30)
        assert again.stdout == "accepted {'approved': True}\n", again
        run_queued(kc, ["chat.close(); agent.stop()"], timeout=30)
