"""A person's email address, from what the administrator set up.

Three sources, asked in this order, the first that knows wins:

1. ``table``: the administrator's own name -> address table;
2. the hub's auth state (a :class:`~hitl_nb.notify.HubDirectory` with an ``email_key``),
   when the authenticator keeps an email there;
3. ``template``: ``{name}@example.org``, the user name put in (the result must be a
   plain address: a name with a space, a second ``@`` or a line break makes none);
   ``{name}`` alone where the hub's user names are addresses.

With a directory, a name the hub does not know has no address at all, whatever the
template would make of it: an agent cannot have the service write to
``anything@example.org`` by naming ``specific:anything``.
"""

from __future__ import annotations

from collections.abc import Mapping

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify._hub_users import HubDirectory
from hitl_nb.notify._targets import check_address

__all__ = ["AddressBook"]

PLACEHOLDER = "{name}"


def _check_template(template: str) -> str:
    if template.count(PLACEHOLDER) != 1:
        raise NotifyRefused(f"an address template holds {PLACEHOLDER} once, got {template!r}")
    if "{" in template.replace(PLACEHOLDER, "") or "}" in template.replace(PLACEHOLDER, ""):
        raise NotifyRefused(f"an address template holds no other braces, got {template!r}")
    # "{name}" alone: the hub's user names are addresses already
    sample = "someone" if "@" in template.replace(PLACEHOLDER, "") else "someone@example.org"
    check_address(template.replace(PLACEHOLDER, sample))
    return template


class AddressBook:
    """Where people's email addresses come from (see the module docstring)."""

    def __init__(
        self,
        *,
        table: Mapping[str, str] | None = None,
        template: str | None = None,
        directory: HubDirectory | None = None,
    ) -> None:
        self.table = {str(name): check_address(addr) for name, addr in (table or {}).items()}
        self.template = None if template is None else _check_template(template)
        self.directory = directory

    async def address(self, name: str) -> str | None:
        """``name``'s address, or None; :class:`~hitl_nb.errors.DeliveryFailed` when the
        hub, asked, cannot answer now."""
        if name in self.table:
            return self.table[name]
        if self.directory is not None:
            user = await self.directory.user(name)
            if user is None:
                return None
            if user.email is not None:
                return user.email
        if self.template is None:
            return None
        try:
            return check_address(self.template.replace(PLACEHOLDER, name))
        except NotifyRefused:
            return None
