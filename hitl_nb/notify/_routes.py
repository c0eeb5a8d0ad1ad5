"""Where a recipient's messages go now: their own choice, else their email, else nowhere.

A person (``user:<name>``) may have turned their messages off, or chosen a personal
webhook of any kind that takes a URL alone (Slack-compatible, Teams: :class:`Preference`,
kept by the store; the webhook's host must be on the administrator's allow-list,
checked again at each send); otherwise, when a Slack app is set up and the person is
one of its users (``slack``: the same mapping as answers, the table or their email), a
personal message from the app (its channel the Slack user's id: :class:`SlackAppTarget`);
otherwise their messages go to the address the :class:`~hitl_nb.notify.AddressBook` finds. A team
channel (``team:<host>``) goes where the administrator's
:class:`~hitl_nb.notify.TeamChannels` says. When there is nowhere to send,
:meth:`Router.route` says why (:class:`NoRoute`), and the sender gives the notes up
with that reason in the audit trail.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify._addresses import AddressBook
from hitl_nb.notify._audience import TeamChannels
from hitl_nb.notify._email import EmailTarget
from hitl_nb.notify._kind import Target, WebhookTarget
from hitl_nb.notify._notes import recipient_parts
from hitl_nb.notify._slack_app import SlackAppTarget

__all__ = ["NoRoute", "Preference", "Router"]


@dataclass(frozen=True)
class Preference:
    """A person's own choice: ``off`` (no messages), or ``webhook``: their own webhook
    instead of email (never an administrator's target)."""

    off: bool = False
    webhook: WebhookTarget | None = None

    def __post_init__(self) -> None:
        if self.webhook is not None and self.webhook.admin:
            raise NotifyRefused("a person's own webhook is checked against the allow-list")


@dataclass(frozen=True)
class NoRoute:
    """There is nowhere to send: ``reason`` says why, in words for the audit trail."""

    reason: str


Preferences = Callable[[str], Awaitable[Preference | None]]
#: A user name -> their Slack user id (None: not a Slack app's user).
SlackUsers = Callable[[str], Awaitable[str | None]]


class Router:
    """Finds where each recipient's message goes (see the module docstring).
    ``preferences``: a person's :class:`Preference` (None: they set none); ``slack``: a
    person's Slack user id, for the app's personal messages."""

    def __init__(
        self,
        *,
        addresses: AddressBook | None = None,
        teams: TeamChannels | None = None,
        preferences: Preferences | None = None,
        slack: SlackUsers | None = None,
    ) -> None:
        self.addresses = addresses
        self.teams = teams or TeamChannels()
        self.preferences = preferences
        self.slack = slack

    async def route(self, recipient: str) -> Target | NoRoute:
        """Where ``recipient``'s message goes now, or why nowhere;
        :class:`~hitl_nb.errors.DeliveryFailed` when that cannot be told now (the hub
        did not answer)."""
        kind, name = recipient_parts(recipient)
        if kind == "team":
            target = self.teams.target(name)
            if target is None:
                return NoRoute(f"the team channel for {name!r} is no longer set")
            return target
        choice = await self.preferences(name) if self.preferences is not None else None
        if choice is not None and choice.off:
            return NoRoute(f"{name} turned their notifications off")
        if choice is not None and choice.webhook is not None:
            return choice.webhook
        slack_id = await self.slack(name) if self.slack is not None else None
        if slack_id is not None:
            return SlackAppTarget(slack_id)
        address = await self.addresses.address(name) if self.addresses is not None else None
        if address is None:
            return NoRoute(f"no email address is known for {name}")
        return EmailTarget(address)
