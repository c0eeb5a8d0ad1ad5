"""Which kinds of channel there are: a registry keyed by kind, as forms' fields are.

Each kind is one module that makes a :class:`~hitl_nb.notify._kind.ChannelKind`
(``_email``, ``_slack``, ``_signed``, ``_teams``), registered here once. The sender's
:class:`~hitl_nb.notify.Channels`, the :class:`~hitl_nb.notify.WebhookChannel` and the
gateway's settings ask the registry, and never test a target's type:

- :meth:`Registry.of`: a target's kind (by its type: how it is rendered and carried);
- :meth:`Registry.team_target`: a team channel's setting: a URL alone (Slack-compatible),
  ``"KIND:URL"`` (``"teams:https://..."``), or a mapping (``{"kind": KIND, "url": ...}``;
  without a kind, a signed webhook: ``{"url", "secret_env"}``);
- :meth:`Registry.own_target`: a person's own webhook, written the same way as text
  (``https://hooks.slack.com/...``, ``teams:https://...``), its host checked against the
  allow-list.

A new kind in a test or a program::

    kinds = default_registry().copy()
    kinds.register(ChannelKind("toy", ToyTarget, "a toy", from_url=ToyTarget, render=...))
    Channels(webhooks=WebhookChannel(kinds=kinds), kinds=kinds)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import _email, _signed, _slack, _slack_app, _teams
from hitl_nb.notify._kind import ChannelKind
from hitl_nb.notify._targets import check_webhook_url

__all__ = ["Registry", "default_registry"]

#: The kind of a URL given alone (what a webhook URL meant before kinds had names).
URL_KIND = "slack"
#: The kind of a mapping that names none (likewise).
MAPPING_KIND = "signed"


class Registry:
    """Channel kinds by name and by target type; a later registration of a name
    replaces the earlier one."""

    def __init__(self, kinds: Iterable[ChannelKind] = ()) -> None:
        self._by_name: dict[str, ChannelKind] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: ChannelKind) -> None:
        """Add ``kind`` (see the module docstring)."""
        self._by_name[kind.name] = kind

    def copy(self) -> Registry:
        """An independent registry with the same kinds."""
        return Registry(self._by_name.values())

    def names(self) -> list[str]:
        """The kinds' names, in the order they were registered."""
        return list(self._by_name)

    def named(self, name: object) -> ChannelKind:
        """The kind called ``name``; else :class:`~hitl_nb.errors.NotifyRefused`."""
        kind = self._by_name.get(name) if isinstance(name, str) else None
        if kind is None:
            raise NotifyRefused(
                f"no channel kind is called {name!r} (there are: {', '.join(self.names())})"
            )
        return kind

    def of(self, target: object) -> ChannelKind:
        """The kind that sends to ``target``; else :class:`~hitl_nb.errors.NotifyRefused`."""
        for kind in reversed(self._by_name.values()):
            if type(target) is kind.target:
                return kind
        raise NotifyRefused(f"no channel kind sends to a {type(target).__name__}")

    def _split(self, text: str) -> tuple[ChannelKind, str]:
        """``"KIND:URL"`` -> (that kind, URL); a URL alone -> (the URL kind, URL)."""
        head, sep, rest = text.partition(":")
        kind = self._by_name.get(head.lower()) if sep else None
        if kind is None:
            return self.named(URL_KIND), text
        if kind.from_url is None:
            raise NotifyRefused(f"{kind.label} is not given by a URL alone")
        return kind, rest

    def team_target(self, spec: object) -> Any:
        """The administrator's target for a team channel (see the module docstring);
        :class:`~hitl_nb.errors.NotifyRefused` saying what is wrong."""
        if isinstance(spec, str):
            kind, url = self._split(spec)
            assert kind.from_url is not None
            return kind.from_url(check_webhook_url(url, admin=True), True)
        if isinstance(spec, Mapping):
            kind = self.named(spec.get("kind", MAPPING_KIND))
            if kind.from_setting is not None:
                return kind.from_setting(spec)
            if kind.from_url is not None:
                unknown = sorted(set(spec) - {"kind", "url"})
                if unknown:
                    raise NotifyRefused(f"unknown key(s) {', '.join(unknown)}")
                given = spec.get("url")
                if isinstance(given, str):
                    return kind.from_url(check_webhook_url(given, admin=True), True)
            raise NotifyRefused(f"{kind.label} is not a team channel")
        raise NotifyRefused("give a webhook URL, or {'url': ..., 'secret_env': ...}")

    def own_target(self, text: str, allowed_hosts: Iterable[str] | None = None) -> Any:
        """A person's own webhook from its text; with ``allowed_hosts``, its URL checked
        against them first (:class:`~hitl_nb.errors.NotifyRefused`)."""
        kind, url = self._split(text)
        if allowed_hosts is not None:
            check_webhook_url(url, allowed_hosts)
        assert kind.from_url is not None
        return kind.from_url(url, False)


_DEFAULT = Registry()
_DEFAULT.register(_email.KIND)
_DEFAULT.register(_slack.KIND)
_DEFAULT.register(_signed.KIND)
_DEFAULT.register(_teams.KIND)
_DEFAULT.register(_slack_app.KIND)


def default_registry() -> Registry:
    """The registry the package uses unless given another (copy it before
    registering)."""
    return _DEFAULT
