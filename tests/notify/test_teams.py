"""Microsoft Teams workflows: the Adaptive Card a real receiver on 127.0.0.1 gets, the
agent's words neutralised in it (S-1), and the retries every webhook kind has."""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest

from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify import (
    AnswerLinks,
    Batch,
    PromptFacts,
    TeamChannels,
    WebhookChannel,
    default_registry,
    opened_notes,
    outcome_notes,
)
from hitl_nb.notify._messages import QUESTION_LIMIT, Message, compose
from hitl_nb.notify._notes import Note
from hitl_nb.notify._teams import CARD_TYPE, TeamsTarget, card, words
from hitl_nb.notify._text import ZWSP
from tests.helpers.tiny_server import Conn, Request, serve
from tests.notify.test_text import HOSTILE, assert_plain

NOW = 1_767_225_600.0  # 2026-01-01 00:00 UTC
LINKS = AnswerLinks("https://hub.example.org/", hub=True)
OURS = "https://hub.example.org/hub/user-redirect/lab?"
TEAM = TeamChannels({"*": TeamsTarget("https://x.example/", admin=True)})

# What an agent could write to make a Teams card say more than its words: markdown
# links and emphasis, mentions, HTML, a text function, bidi overrides, zero-width
# characters, right-to-left text, and Slack's own hostile strings.
TEAMS_HOSTILE = [
    "[click here](https://evil.example/login)",
    "**urgent** _now_",
    "- a list\n1. numbered",
    "<at>Everyone</at>",
    "<at id='0'>Alice</at>",
    "<b>bold</b><a href='https://evil.example'>x</a><img src=x onerror=alert(1)>",
    "<!-- hidden -->",
    "{{DATE(2017-02-14T06:00:00Z, SHORT)}}",
    "＜at＞lookalike＜/at＞",
    "\u202eevil\u202c \u200d\u200c\ufeff\u2066\u2069",
    "מה השעה? هل توافق؟",
    "zero\u200bwidth",
    *HOSTILE,
]


def facts(question: str, **kw: Any) -> PromptFacts:
    given: dict[str, Any] = {"registered_by": "Alice", "registrant": "alice"}
    given.update(deadline=NOW + 1800, **kw)
    return PromptFacts("r1", "p1", "https://agent.example.org/", question, **given)


def opened(question: str = "Deploy build 42?", **kw: Any) -> Message:
    note = opened_notes(facts(question, **kw), TEAM, NOW)[0]
    return compose(Batch(note.recipient, "t", (note,), 1), LINKS, NOW)


def runs(node: Any) -> Iterator[dict[str, Any]]:
    """Every TextRun of a card."""
    if isinstance(node, dict):
        if node.get("type") == "TextRun":
            yield node
        for value in node.values():
            yield from runs(value)
    elif isinstance(node, list):
        for value in node:
            yield from runs(value)


def urls(node: Any) -> Iterator[str]:
    """Every URL a card would open."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "url":
                yield value
            else:
                yield from urls(value)
    elif isinstance(node, list):
        for value in node:
            yield from urls(value)


def blocks(node: Any) -> Iterator[dict[str, Any]]:
    """Every RichTextBlock of a card."""
    if isinstance(node, dict):
        if node.get("type") == "RichTextBlock":
            yield node
        for value in node.values():
            yield from blocks(value)
    elif isinstance(node, list):
        for value in node:
            yield from blocks(value)


def text_of(document: Any) -> str:
    """The card's text as a reader sees it: a line per block."""
    return "\n".join("".join(run["text"] for run in runs(b)) for b in blocks(document))


# What a Teams client would turn into markup of the agent's: a markdown link, a mention
# or a tag, a text function, a live URL or address.
LIVE = [
    re.compile(r"\]\("),
    re.compile(r"<[A-Za-z/!?]"),
    re.compile(r"\{\{"),
    re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://"),
    re.compile(r"\.\w"),
    re.compile(r"@\w"),
]


def assert_neutral(text: str) -> None:
    for pattern in LIVE:
        assert not pattern.search(text), (pattern.pattern, text)
    assert_plain(text, newlines=True)


def ok(request: Request, conn: Conn) -> None:
    conn.answer(b"", 202)


def send(msg: Message, target: TeamsTarget, channel: WebhookChannel | None = None) -> None:
    async def go() -> None:
        hooks = channel or WebhookChannel()
        try:
            await hooks.deliver(msg, target)
        finally:
            await hooks.aclose()

    asyncio.run(go())


def test_a_teams_workflow_gets_an_adaptive_card_with_an_answer_button() -> None:
    msg = opened("Ship build 42 to production?", needed=2)
    with serve(ok) as receiver:
        path = "/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=SECRETSIG"
        send(msg, TeamsTarget(receiver.url + path, admin=True))
    (got,) = receiver.requests
    assert got.method == "POST" and got.path == path
    assert got.header("content-type") == "application/json"
    assert got.header("idempotency-key") == msg.key
    body = got.json()
    assert body["type"] == "message"
    (attachment,) = body["attachments"]
    assert attachment["contentType"] == CARD_TYPE == "application/vnd.microsoft.card.adaptive"
    content = attachment["content"]
    assert content["type"] == "AdaptiveCard" and content["version"] == "1.4"
    assert content["actions"] == [{"type": "Action.OpenUrl", "title": "Answer", "url": msg.link}]
    assert msg.link.startswith(OURS)
    said = text_of(content)
    assert "Question for the team: Ship build 42 to production?" in said  # the title
    assert "asks anyone on the team:" in said  # who may answer
    assert "It needs 2 people to give the same answer." in said
    assert "Answer by 2026-01-01 00:30 UTC (in 30 minutes)." in said  # the deadline
    assert "Answer it here" not in said  # that paragraph is the button
    assert '"TextBlock"' not in got.body.decode()  # no block that reads markdown
    assert list(urls(content)) == [msg.link]


@pytest.mark.parametrize("hostile", TEAMS_HOSTILE)
def test_the_agents_words_are_neutralised_on_the_card(hostile: str) -> None:
    msg = opened(f"Approve? {hostile} {hostile}", registered_by=f"Mallory {hostile}")
    content = card(msg)
    said = text_of(content)
    assert_neutral(said.replace(msg.link, ""))
    assert list(urls(content)) == [msg.link]  # the only link is ours
    for run in runs(content):  # nothing but text and our style on a run
        assert set(run) <= {"type", "text", "weight", "size", "selectAction"}


def test_mentions_tags_markdown_and_invisible_characters_do_not_survive() -> None:
    out = words(TEAMS_HOSTILE[3] + TEAMS_HOSTILE[0] + TEAMS_HOSTILE[9], 500)
    assert "<at>" not in out and f"<{ZWSP}at>" in out
    assert "](" not in out and "https://" not in out
    assert not any(unicodedata.category(ch) == "Cf" and ch != ZWSP for ch in out)
    assert out.replace(ZWSP, "").startswith("<at>Everyone</at>[click here]")
    rtl = words(TEAMS_HOSTILE[10], 100)
    assert rtl == TEAMS_HOSTILE[10]  # right-to-left text reads as written
    assert (
        words("＜at＞x＜/at＞ {{DATE(x)}}", 100) == f"<{ZWSP}at>x<{ZWSP}/at> {{{ZWSP}{{DATE(x)}}}}"
    )


def test_a_novel_is_cut() -> None:
    msg = opened("word " * 2000 + "[x](https://evil.example)")  # 10,000 characters and more
    content = card(msg)
    (question,) = [
        run["text"] for item in content["body"] if item["type"] == "Container" for run in runs(item)
    ]
    assert len(question.replace(ZWSP, "")) <= QUESTION_LIMIT and question.endswith("…")
    assert len(content["body"]) < 10


def test_outcomes_and_digests_are_cards_too() -> None:
    f = facts("Deploy?", specific=("bob",), outcome="forwarded", responders=("bob",))
    (note,) = outcome_notes(f, NOW)
    outcome = compose(Batch(note.recipient, "t", (note,), 1), LINKS, NOW)
    content = card(outcome)
    assert content["actions"][0]["title"] == "See it"
    assert "Your agent's question was answered by bob" in text_of(content)
    expired = card(
        compose(
            Batch(note.recipient, "t", (Note(**{**vars(note), "facts": facts("Deploy?")}),), 1),
            LINKS,
            NOW,
        )
    )
    assert "Nobody answered" in text_of(expired)
    notes = [
        opened_notes(
            facts(f"Question {i} [x](https://evil.example)", specific=("bob",)), TEAM, NOW
        )[0]
        for i in range(3)
    ]
    notes = [
        Note(**{**vars(n), "key": f"k{i}", "facts": facts(f"Q{i} <at>all</at>")})
        for i, n in enumerate(notes)
    ]
    digest = compose(Batch("user:bob", "t", tuple(notes), 5), LINKS, NOW)
    content = card(digest)
    assert content["actions"] == [
        {"type": "Action.OpenUrl", "title": "See them all", "url": LINKS.inbox()}
    ]
    said = text_of(content)
    assert "3 new questions for you" in said and "... and 2 more." in said
    assert_neutral(said)
    opens = [r for r in runs(content) if "selectAction" in r]
    assert [r["text"] for r in opens] == ["open it"] * 3
    assert all(u.startswith(OURS) for u in urls(content))


@pytest.mark.parametrize(
    ("status", "permanent"), [(500, False), (503, False), (429, False), (408, False), (400, True)]
)
def test_what_a_workflows_answer_means(status: int, permanent: bool) -> None:
    def answer(request: Request, conn: Conn) -> None:
        conn.answer({"error": "no"}, status)

    with serve(answer) as receiver:
        target = TeamsTarget(receiver.url + "/workflows/w?sig=SECRETSIG", admin=True)
        with pytest.raises(DeliveryFailed, match=f"answered {status}") as caught:
            send(opened(), target)
    assert caught.value.permanent is permanent
    assert "SECRETSIG" not in str(caught.value) and "SECRETSIG" not in repr(target)


def test_a_retried_card_is_the_same_card_with_the_same_key() -> None:
    answers = [503, 429, 202]

    def flaky(request: Request, conn: Conn) -> None:
        conn.answer(b"", answers.pop(0))

    msg = opened()
    with serve(flaky) as receiver:
        target = TeamsTarget(receiver.url + "/w", admin=True)
        for _ in range(2):
            with pytest.raises(DeliveryFailed) as caught:
                send(msg, target)
            assert not caught.value.permanent
        send(msg, target)
    first, second, third = receiver.requests
    assert first.body == second.body == third.body
    assert {r.header("idempotency-key") for r in receiver.requests} == {msg.key}


def test_teams_is_given_as_teams_colon_url_by_the_administrator_and_by_people() -> None:
    kinds = default_registry()
    hook = "https://prod-01.westeurope.logic.azure.com:443/workflows/x/triggers?sig=S"
    team = kinds.team_target("teams:" + hook)
    assert team == TeamsTarget(hook, admin=True)
    assert kinds.team_target({"kind": "teams", "url": hook}) == team
    mine = kinds.own_target("teams:" + hook, ["*.logic.azure.com"])
    assert mine == TeamsTarget(hook) and not mine.admin
    with pytest.raises(NotifyRefused, match="not on the administrator's list"):
        kinds.own_target("teams:" + hook, ["hooks.slack.com"])
    with pytest.raises(NotifyRefused, match="unknown key"):
        kinds.team_target({"kind": "teams", "url": hook, "secret_env": "X"})
    assert "sig=S" not in repr(team) and "/workflows" not in repr(team)


def test_a_personal_teams_webhook_goes_only_to_an_allowed_host() -> None:
    with serve(ok) as receiver:
        port = receiver.url.rsplit(":", 1)[1]
        channel = WebhookChannel([f"http://127.0.0.1:{port}"])
        send(opened(), TeamsTarget(receiver.url + "/mine"), channel)
        with pytest.raises(DeliveryFailed, match="not on the administrator's list") as caught:
            send(opened(), TeamsTarget(f"http://localhost:{port}/mine"), WebhookChannel([]))
        assert caught.value.permanent
    assert len(receiver.requests) == 1
