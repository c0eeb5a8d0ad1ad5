"""Who a Slack user is on this host: a Slack user answers only once mapped to a user.

Two ways, the administrator's choice (docs/notify.md): a table (Slack user id -> user
name), asked first; and, when turned on, the Slack user's email (``users.info``, which
needs the app's scope ``users:read.email``; a deleted user, a bot, or an email Slack
did not confirm counts for nobody) matched to the user whose address the
:class:`~hitl_nb.notify.AddressBook` gives is that very email (the table's, the
template's, the hub's auth state's: a candidate name is read from the table or the
template, then its address asked and compared). Anything else maps to nobody.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from hitl_nb.errors import DeliveryFailed
from hitl_nb.notify._addresses import AddressBook
from hitl_nb.notify._slack_api import SlackApi

__all__ = ["SlackPeople"]

log = logging.getLogger("hitl_nb.notify")


class SlackPeople:
    """Who a Slack user is on this host: ``table`` (Slack user id -> user name), else,
    with ``match_email``, the user whose address (``addresses``) is the Slack user's
    confirmed email (``users.info``; the app needs the scope ``users:read.email``)."""

    def __init__(
        self,
        table: Mapping[str, str],
        api: SlackApi,
        addresses: AddressBook | None = None,
        *,
        match_email: bool = False,
    ) -> None:
        self.table = {str(k): str(v) for k, v in table.items()}
        self.api = api
        self.addresses = addresses
        self.match_email = match_email

    async def user_of(self, slack_id: str) -> str | None:
        """The user name ``slack_id`` answers as, or None (not mapped)."""
        if slack_id in self.table:
            return self.table[slack_id]
        if not self.match_email or self.addresses is None:
            return None
        try:
            info = await self.api.call("users.info", {"user": slack_id})
        except DeliveryFailed as exc:
            log.info("hitl-nb slack: who %s is could not be asked: %s", slack_id[:32], exc)
            return None
        found = info.get("user")
        user: dict[str, Any] = found if isinstance(found, dict) else {}
        given = user.get("profile")
        profile: dict[str, Any] = given if isinstance(given, dict) else {}
        email = profile.get("email")
        if not isinstance(email, str) or user.get("deleted") or user.get("is_bot"):
            return None
        if user.get("is_email_confirmed") is False:
            return None
        for name in self._candidates(email):
            found = await self.addresses.address(name)
            if found is not None and found.lower() == email.lower():
                return name
        return None

    async def slack_id_of(self, name: str) -> str | None:
        """The Slack user ``name`` is (the table read backwards; else, with
        ``match_email``, the Slack user whose email is ``name``'s address:
        ``users.lookupByEmail``, scope ``users:read.email``), or None."""
        for slack_id, user in self.table.items():
            if user == name:
                return slack_id
        if not self.match_email or self.addresses is None:
            return None
        email = await self.addresses.address(name)
        if email is None:
            return None
        try:
            info = await self.api.call("users.lookupByEmail", {"email": email})
        except DeliveryFailed as exc:
            log.info("hitl-nb slack: %s's Slack user could not be asked: %s", name, exc)
            return None
        given = info.get("user")
        found: dict[str, Any] = given if isinstance(given, dict) else {}
        ident = found.get("id")
        if not isinstance(ident, str) or found.get("deleted") or found.get("is_bot"):
            return None
        # the same rule both ways: the Slack user must map back to this very user
        return ident if await self.user_of(ident) == name else None

    def _candidates(self, email: str) -> list[str]:
        book = self.addresses
        assert book is not None
        names = [n for n, a in book.table.items() if a.lower() == email.lower()]
        template = book.template
        if template is not None:
            head, _, tail = template.partition("{name}")
            low = email.lower()
            if low.startswith(head.lower()) and low.endswith(tail.lower()):
                middle = email[len(head) : len(email) - len(tail)]
                if middle:
                    names.append(middle)
        return names
