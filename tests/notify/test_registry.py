"""The channel kinds' registry: a kind of a test's own, registered once, is given in the
settings and by a person, routed, rendered and posted like the package's own kinds."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest

from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.gateway._notify import team_channels
from hitl_nb.notify import (
    AnswerLinks,
    Batch,
    Channels,
    Preference,
    PromptFacts,
    Router,
    TeamChannels,
    WebhookChannel,
    default_registry,
    opened_notes,
)
from hitl_nb.notify._email import EmailTarget
from hitl_nb.notify._kind import ChannelKind
from hitl_nb.notify._messages import Message, compose
from hitl_nb.notify._signed import SignedTarget
from hitl_nb.notify._slack import SlackTarget
from hitl_nb.notify._teams import TeamsTarget
from tests.helpers.tiny_server import Conn, Request, serve

NOW = 1_767_225_600.0
LINKS = AnswerLinks("https://hub.example.org/", hub=True)


@dataclass(frozen=True)
class ToyTarget:
    """A test's own kind of webhook."""

    url: str
    admin: bool = False


def toy_render(message: Message, target: ToyTarget, now: float) -> tuple[bytes, dict[str, str]]:
    return json.dumps({"toy": message.subject_line()}).encode(), {"X-Toy": "1"}


TOY = ChannelKind("toy", ToyTarget, "a toy", from_url=ToyTarget, render=toy_render)


def ok(request: Request, conn: Conn) -> None:
    conn.answer({"ok": True})


def test_a_toy_kind_works_with_one_registration() -> None:
    kinds = default_registry().copy()
    kinds.register(TOY)  # the one registration
    with serve(ok) as receiver:
        teams = team_channels({"*": "toy:" + receiver.url + "/team"}, kinds)
        facts = PromptFacts("r1", "p1", "https://agent.example.org/", "Deploy?")
        (note,) = [n for n in opened_notes(facts, teams, NOW) if n.kind == "opened"]
        message = compose(Batch(note.recipient, "t", (note,), 1), LINKS, NOW)

        async def preference(name: str) -> Preference:
            return Preference(webhook=kinds.own_target("toy:" + receiver.url + "/bob"))

        async def go() -> None:
            router = Router(teams=teams, preferences=preference)
            allowed = ["http://127.0.0.1:" + receiver.url.rsplit(":", 1)[1]]
            channels = Channels(webhooks=WebhookChannel(allowed, kinds=kinds), kinds=kinds)
            try:
                for recipient in (note.recipient, "user:bob"):
                    target = await router.route(recipient)
                    assert isinstance(target, ToyTarget)
                    await channels.deliver(message, target)
            finally:
                await channels.aclose()

        asyncio.run(go())
    team, bob = receiver.requests
    assert (team.path, bob.path) == ("/team", "/bob")
    assert team.json() == {"toy": "Question for the team: Deploy?"}
    assert team.header("x-toy") == "1" and team.header("idempotency-key") == message.key
    assert TOY not in [default_registry().named(n) for n in default_registry().names()]


def test_the_packages_kinds() -> None:
    kinds = default_registry()
    assert kinds.names() == ["email", "slack", "signed", "teams", "slack-app"]
    assert kinds.of(EmailTarget("bob@example.org")).transport == "email"
    url = "https://hooks.example.org/x"
    assert kinds.team_target(url) == SlackTarget(url, admin=True)  # a URL alone, as before
    assert kinds.team_target("slack:" + url) == SlackTarget(url, admin=True)
    assert kinds.team_target("TEAMS:" + url) == TeamsTarget(url, admin=True)
    signed = kinds.team_target({"url": url, "secret_env": "K"})  # a mapping, as before
    assert isinstance(signed, SignedTarget) and signed.admin
    assert kinds.own_target(url, ["hooks.example.org"]) == SlackTarget(url)


@pytest.mark.parametrize(
    ("given", "words"),
    [
        pytest.param("signed:https://hooks.example.org/x", "not given by a URL", id="signed-url"),
        pytest.param("email:bob@example.org", "not given by a URL", id="email"),
        pytest.param("toy:https://hooks.example.org/x", "http(s)", id="unknown-kind"),
    ],
)
def test_a_person_cannot_choose_a_kind_that_needs_more_than_a_url(given: str, words: str) -> None:
    with pytest.raises(NotifyRefused, match=words.replace("(", r"\(").replace(")", r"\)")):
        default_registry().own_target(given, ["hooks.example.org"])


def test_a_team_channel_of_an_unknown_or_unfit_kind_is_refused() -> None:
    kinds = default_registry()
    with pytest.raises(NotifyRefused, match="no channel kind is called 'fax'"):
        kinds.team_target({"kind": "fax", "url": "https://x.example/"})
    with pytest.raises(NotifyRefused, match="email is not a team channel"):
        kinds.team_target({"kind": "email", "url": "https://x.example/"})


def test_a_target_of_no_kind_or_without_its_transport_fails_for_good() -> None:
    facts = PromptFacts("r", "p", "https://a.example/", "Q?", specific=("bob",))
    note = opened_notes(facts, TeamChannels(), NOW)[0]
    message = compose(Batch(note.recipient, "t", (note,), 1), LINKS, NOW)

    async def go() -> None:
        channels = Channels()  # nothing set up
        with pytest.raises(DeliveryFailed, match="no channel kind sends to a ToyTarget") as one:
            await channels.deliver(message, ToyTarget("https://x.example/"))
        with pytest.raises(DeliveryFailed, match="no SMTP server") as two:
            await channels.deliver(message, EmailTarget("bob@example.org"))
        with pytest.raises(DeliveryFailed, match="webhooks are not set up") as three:
            await channels.deliver(message, TeamsTarget("https://x.example/"))
        assert one.value.permanent and two.value.permanent and three.value.permanent

    asyncio.run(go())


def test_a_kind_is_named_by_a_word_and_a_posting_kind_renders() -> None:
    with pytest.raises(NotifyRefused, match="lower-case word"):
        ChannelKind("https", ToyTarget, "x", render=toy_render)
    with pytest.raises(NotifyRefused, match="renders nothing"):
        ChannelKind("toy", ToyTarget, "x")
