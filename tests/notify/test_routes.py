"""Where each recipient's message goes: their own choice, their address, the team's
channel; or why nowhere."""

from __future__ import annotations

import asyncio

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import AddressBook, Preference, Router, TeamChannels
from hitl_nb.notify._email import EmailTarget
from hitl_nb.notify._routes import NoRoute
from hitl_nb.notify._slack import SlackTarget

HOOK = SlackTarget("https://hooks.example.org/bob")
TEAM = SlackTarget("https://hooks.example.org/team", admin=True)


async def prefs(name: str) -> Preference | None:
    return {"bob": Preference(webhook=HOOK), "carol": Preference(off=True)}.get(name)


ROUTER = Router(
    addresses=AddressBook(template="{name}@example.org"),
    teams=TeamChannels({"*": TEAM}),
    preferences=prefs,
)


def route(router: Router, recipient: str):
    return asyncio.run(router.route(recipient))


def test_each_recipient():
    assert route(ROUTER, "user:bob") is HOOK
    assert route(ROUTER, "user:carol") == NoRoute("carol turned their notifications off")
    assert route(ROUTER, "user:dave") == EmailTarget("dave@example.org")
    assert route(ROUTER, "user:dave smith") == NoRoute("no email address is known for dave smith")
    assert route(ROUTER, "team:*") is TEAM
    assert route(ROUTER, "team:agent.example.org") == NoRoute(
        "the team channel for 'agent.example.org' is no longer set"
    )
    assert route(Router(), "user:dave") == NoRoute("no email address is known for dave")


def test_a_personal_webhook_is_never_an_administrators():
    with pytest.raises(NotifyRefused):
        Preference(webhook=TEAM)
