"""The contract with JupyterLab's page (hitl_nb/schemas/lab.schema.json): a valid
schema; the Python side's words and names are its own; real feed items and feed events
of a real gateway fit it (the server's listings and events: tests/server/test_lab.py);
and src/contract.ts is what the schema makes, so a change on one side alone fails."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from hitl_nb import _lab_contract
from hitl_nb._lab_contract import EVENT_ID, SCHEMA
from hitl_nb.a2a import SSEParser
from hitl_nb.gateway import AgentPool, Caller, FeedChange, Gateway, GatewaySettings, PromptState
from hitl_nb.gateway._feed import sse_frames
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import Registration
from tests.helpers.contract import conforms

ROOT = Path(__file__).resolve().parent.parent
ALICE, BOB = Caller("alice", "Alice"), Caller("bob", "Bob")
ANONYMOUS = Caller(None, "the server's user")
SCHEMA_OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def test_the_contract_is_a_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    for name, definition in SCHEMA["$defs"].items():
        Draft202012Validator.check_schema(definition)
        assert definition.get("description"), f"{name} says what it is"


def test_the_prompt_states_are_the_contracts() -> None:
    assert [s.value for s in PromptState] == SCHEMA["$defs"]["PromptState"]["enum"]
    # A member is its word: in JSON, in f-strings, compared with the wire's.
    assert json.dumps({"state": PromptState.FORWARDING}) == '{"state": "forwarding"}'
    assert f"{PromptState.OPEN}" == str(PromptState.OPEN) == "open" == PromptState.OPEN


def test_the_python_names_are_read_from_the_contract() -> None:
    assert EVENT_ID == "urn:hitl-nb:events:lab-prompts:v1"
    assert _lab_contract.EVENT_SCHEMA["required"] == ["feed", "epoch", "seq"]
    assert _lab_contract.PROMPTS_ROUTE == "hitl/lab/prompts"
    assert _lab_contract.PLACES_ROUTE == "hitl/lab/places"
    params = (_lab_contract.URL_PROMPT, _lab_contract.URL_REGISTRATION, _lab_contract.URL_INBOX)
    assert params == ("hitl-prompt", "hitl-registration", "hitl-inbox")


def test_the_contract_refuses_an_item_the_page_would_misread() -> None:
    item = _an_item()
    for broken in (
        {**item, "state": "answered"},  # not a state
        {**item, "needed": 0},
        {**item, "deadline_at": "soon"},
        {**item, "surprise": 1},  # a member the page's types do not know
        {k: v for k, v in item.items() if k != "why_not"},
    ):
        with pytest.raises(AssertionError, match="not a PromptItem"):
            conforms("PromptItem", broken)


def _an_item() -> dict[str, Any]:
    return {
        "key": "r/p",
        "registration": "r",
        "agent_url": "http://agent.invalid",
        "task_id": "t",
        "prompt_id": "p",
        "prompt": "Ship it?",
        "prompt_length": 8,
        "deadline": None,
        "deadline_at": None,
        "first_seen": 1.5,
        "allowed_responders": ["any"],
        "specific": [],
        "needed": 1,
        "state": "open",
        "may_answer": True,
        "why_not": None,
        "answers": 0,
        "agreeing": 0,
        "disagreement": False,
        "answered": False,
        "registered_by": "alice",
    }


def _envelope(prompt_id: str, responders: list[str], **more: Any) -> dict[str, Any]:
    return {
        "prompt_id": prompt_id,
        "prompt": f"Prompt {prompt_id}?",
        "response_schema": SCHEMA_OK,
        "allowed_responders": responders,
        **more,
    }


def test_a_real_gateways_feed_items_and_events_fit_the_contract(tmp_path: Path) -> None:
    """Every kind of item a gateway lists (anyone, named people, a consensus answered
    and disagreed on, a deadline, a long question, a server that cannot name its users),
    and each feed event they travel in."""
    two, three = str(uuid.uuid4()), str(uuid.uuid4())
    due = time.time() + 600
    prompts = [
        ("p-any", _envelope("p-any", ["any"]), None),
        ("p-bob", _envelope("p-bob", ["specific:bob", "specific:carol"]), None),
        (two, _envelope(two, ["consensus:2"]), None),
        (three, _envelope(three, ["consensus:3"]), None),
        (
            "p-due",
            _envelope("p-due", ["any"], deadline="2099-01-01T00:00:00Z", prompt="é" * 5000),
            due,
        ),
    ]

    async def main() -> list[FeedChange]:
        settings = GatewaySettings(show_all=True, watch=False, push=False)
        gw = Gateway(SQLiteStore(tmp_path / "gw.sqlite"), AgentPool([], 10.0), settings)
        await gw.store.open()
        try:
            await gw.store.add_registration(
                Registration("r1", "http://agent.invalid", "t-1", "alice", time.time(), "alice")
            )
            for pid, envelope, deadline in prompts:
                await gw.store.see_prompt("r1", pid, None, envelope, deadline)
            assert (await gw.answer("r1", two, BOB, {"ok": True})).status == 202
            assert (await gw.answer("r1", three, BOB, {"ok": True})).status == 202
            assert (await gw.answer("r1", three, ALICE, {"ok": False})).status == 202
            changes = []
            for caller in (BOB, ALICE, ANONYMOUS):
                feed = gw.feed.follow(caller)
                try:
                    changes.append(await asyncio.wait_for(feed.__anext__(), 30))
                finally:
                    await feed.aclose()
            return changes
        finally:
            await gw.close()

    changes = asyncio.run(main())
    items = [item for change in changes for item in change.items]
    for item in items:
        conforms("PromptItem", item)
    kinds = {(i["needed"], i["answered"], i["disagreement"], i["may_answer"]) for i in items}
    assert (2, True, False, True) in kinds  # bob's consensus answer counted
    assert (3, True, True, True) in kinds  # the answers differ
    assert any(not i["may_answer"] and i["why_not"] for i in items)  # the anonymous user
    assert any(i["deadline_at"] == due and i["prompt_length"] == 5000 for i in items)
    # The same items as the feed's server-sent events, and the other events.
    frames = [f for change in changes for f in sse_frames(change)]
    frames += sse_frames(FeedChange(False, [], ["r1/p-any"], 4))
    frames += sse_frames(FeedChange(False, problem="the database cannot be reached"))
    parser = SSEParser()
    events = [e for frame in frames for e in parser.feed(frame)]
    names = SCHEMA["$defs"]["FeedEventName"]["enum"]
    assert {e.event for e in events} == set(names)
    for event in events:
        conforms("Feed" + event.event.capitalize(), json.loads(event.data))


def _node_script(script: str) -> list[str]:
    """``node scripts/<script>`` with the extension's node_modules (an editable install,
    or ``jlpm install``, puts them there); skipped where they are not, but under CI."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "json-schema-to-typescript").is_dir():
        why = "the JupyterLab extension's node_modules (pip install -e . builds them) and node"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs {why}", pytrace=False)
        pytest.skip(f"needs {why}")
    return [node, str(ROOT / "scripts" / script)]


@pytest.mark.slow
def test_the_typescript_of_the_contract_is_generated_from_it() -> None:
    """src/contract.ts is what scripts/contract.mjs makes of the schema now (regenerated
    and compared): a schema changed without `jlpm build:contract` fails here."""
    command = [*_node_script("contract.mjs"), "--check"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (ROOT / "src" / "contract.ts").read_text("utf-8")
    assert f"export const EVENT_SCHEMA = '{EVENT_ID}';" in text
    assert "export type PromptState =" in text
