"""hitl-nb's notebook layer against an agent built on the official a2a-sdk (Python),
whose streamed turns start with the stored task (tests/helpers/sdk_agent.py).

The client-level checks (prompt, 422, 409, streamed answer to completion) are in
tests/client/test_sdk_agent.py and the harness in tests/conformance/test_sdk_agent.py; this adds the
Conversation a notebook user would drive, on both bindings.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hitl_nb.a2a import TaskState
from hitl_nb.notebook import Conversation
from tests.helpers.sdk_agent import SdkAgent


@pytest.fixture(scope="module")
def agent() -> Iterator[SdkAgent]:
    with SdkAgent() as running:
        yield running


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_conversation_with_a_python_sdk_agent(agent: SdkAgent, binding: str) -> None:
    chat = Conversation.start(agent.url, "release", binding=binding)
    try:
        card = chat.current
        assert card is not None
        # Struct order is arbitrary per process: the card's fields come in the stable one.
        assert list(card.envelope.response_schema["properties"]) == [
            "approved",
            "comment",
            "copies",
        ]
        refused = chat.answer({"approved": "yes"}, validate=False)
        assert refused.status == "invalid"
        assert [e["path"] for e in refused.validation_errors] == ["/approved"]
        outcome = chat.answer({"approved": True})
        assert outcome.status == "accepted", outcome
        assert chat.refresh().status.state is TaskState.COMPLETED
        assert chat.current is None
    finally:
        chat.close()
