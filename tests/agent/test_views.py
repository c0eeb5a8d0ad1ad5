"""The two rewrites of a response's JSON: envelopes taken out, the card's entry whole."""

from __future__ import annotations

import copy
from typing import Any

from hitl_nb.agent._views import declare_in_card, strip_envelopes
from hitl_nb.spec import EXTENSION_URI

ENVELOPE = {"prompt_id": "p", "prompt": "q", "response_schema": {"type": "object"}}


def _message(**meta: Any) -> dict[str, Any]:
    return {"parts": [{"text": "q"}], "metadata": meta, "extensions": [EXTENSION_URI, "x:y"]}


def test_envelopes_are_taken_out_everywhere_and_nothing_else() -> None:
    task = {
        "status": {"message": _message(**{EXTENSION_URI: ENVELOPE, "hitlNbTag": "t"})},
        "history": [_message(**{EXTENSION_URI: ENVELOPE}), {"metadata": {"other": 1}}],
        "metadata": {EXTENSION_URI: "task-level too"},
    }
    assert strip_envelopes(task)
    assert task["status"]["message"] == {
        "parts": [{"text": "q"}],
        "metadata": {"hitlNbTag": "t"},
        "extensions": ["x:y"],
    }
    assert task["history"][0] == {"parts": [{"text": "q"}], "extensions": ["x:y"]}
    assert task["history"][1] == {"metadata": {"other": 1}}
    assert "metadata" not in task
    untouched = {"status": {"message": {"parts": [{"text": EXTENSION_URI}]}}}
    before = copy.deepcopy(untouched)
    assert not strip_envelopes(untouched) and untouched == before


def test_a_deep_response_is_walked_without_recursion() -> None:
    deep: Any = {"metadata": {EXTENSION_URI: 1}}
    for _ in range(50_000):
        deep = [deep]
    assert strip_envelopes(deep)


def test_the_card_entry_is_written_out_whole() -> None:
    card = {
        "capabilities": {"extensions": [{"uri": EXTENSION_URI, "description": "d"}, {"uri": "o"}]}
    }
    assert declare_in_card(card)
    assert card["capabilities"]["extensions"] == [
        {"uri": EXTENSION_URI, "description": "d", "required": False, "params": {}},
        {"uri": "o"},
    ]
    assert list(card["capabilities"]["extensions"][0]) == [
        "uri",
        "description",
        "required",
        "params",
    ]
    assert not declare_in_card(card)  # already whole
    assert not declare_in_card({"capabilities": {}}) and not declare_in_card([])
