"""The client options a notebook call takes, checked before anything connects."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hitl_nb.client import HttpLimits, SyncHitlClient
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation, Inbox
from hitl_nb.notebook._link import checked_options


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def test_timeout_is_seconds_for_each_request_as_httpx_users_write_it(agent: MockAgent) -> None:
    with Conversation.start(agent.url, "approval", timeout=1) as chat:
        limits = chat.link.client.limits
        assert (limits.timeout, limits.connect_timeout) == (1.0, 1.0)
        assert chat.answer({"approve": True}).status == "accepted"
    assert checked_options("X", {"timeout": 12})["limits"] == HttpLimits(timeout=12.0)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (
            {"timout": 1},
            "Conversation.start() got an unexpected option 'timout'; the client "
            "options it takes are: ",
        ),
        ({"a": 1, "b": 2}, "Conversation.start() got unexpected options 'a', 'b'"),
        (
            {"timeout": "soon"},
            "Conversation.start(): timeout is the seconds each request may "
            "take (a positive number), not 'soon'",
        ),
        ({"timeout": 0}, "a positive number"),
        ({"timeout": 1, "limits": HttpLimits()}, "either timeout= or limits="),
    ],
)
def test_an_option_the_client_does_not_take_is_refused_naming_the_call(
    agent: MockAgent, options: dict[str, object], words: str
) -> None:
    with pytest.raises(TypeError) as caught:
        Conversation.start(agent.url, "approval", **options)
    assert words in str(caught.value)
    if "options it takes" in words:  # every option named, the one users try first too
        for name in ("timeout", "limits", "headers", "call_timeout", "trace"):
            assert name in str(caught.value)


def test_attach_and_inbox_name_themselves(agent: MockAgent) -> None:
    with pytest.raises(TypeError, match=r"^Conversation\.attach\(\) got an unexpected option"):
        Conversation.attach(agent.url, "no-such-task", retries=3)
    with pytest.raises(TypeError, match=r"^Inbox\(\) got an unexpected option 'verify'"):
        Inbox(agents=[agent.url], gateway=None, client_options={"verify": False})
    with SyncHitlClient(agent.url) as client:
        with pytest.raises(TypeError, match=r"^Conversation\.start\(\): client options"):
            Conversation.start(client, "approval", timeout=1)
