"""Generic JSON webhooks, each request signed: the channel kind ``signed``.

The administrator gives one as ``{"url": ..., "secret_env": NAME}`` (or
``"secret_file"``; ``"kind": "signed"`` may be said, and is what a mapping without a
kind means). The body is :meth:`~hitl_nb.notify.Message.to_json`; the headers sign it
with the secret (HMAC-SHA256, :mod:`hitl_nb.notify._signature`, read at each request).
A person cannot choose one of their own: it needs a secret only the administrator sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify._kind import ChannelKind
from hitl_nb.notify._messages import Message
from hitl_nb.notify._secrets import Secret
from hitl_nb.notify._signature import signed_headers
from hitl_nb.notify._targets import check_webhook_url, shown_url

__all__ = ["KIND", "SignedTarget"]

_KEYS = {"kind", "url", "secret_env", "secret_file"}


@dataclass(frozen=True)
class SignedTarget:
    """A JSON webhook whose requests are signed with ``secret``. ``admin``: the
    administrator gave it."""

    url: str
    secret: Secret
    admin: bool = False

    def __repr__(self) -> str:
        return f"SignedTarget({shown_url(self.url)!r}, {self.secret!r}, admin={self.admin})"


def from_setting(spec: Mapping[str, Any]) -> SignedTarget:
    """The administrator's ``{"url", "secret_env" | "secret_file"}``."""
    url = spec.get("url")
    if not isinstance(url, str):
        raise NotifyRefused("give a webhook URL, or {'url': ..., 'secret_env': ...}")
    unknown = sorted(set(spec) - _KEYS)
    if unknown:
        raise NotifyRefused(f"unknown key(s) {', '.join(unknown)}")
    url = check_webhook_url(url, admin=True)
    env, file = spec.get("secret_env"), spec.get("secret_file")
    if (env is None) == (file is None):
        raise NotifyRefused("a signed webhook names its secret_env or secret_file")
    secret = Secret(env=str(env)) if env is not None else Secret(file=str(file))
    return SignedTarget(url, secret, admin=True)


def render(message: Message, target: SignedTarget, now: float) -> tuple[bytes, dict[str, str]]:
    """The message's JSON document, and its signature's headers (the secret read now:
    :class:`~hitl_nb.errors.NotifyRefused` when it cannot be)."""
    body = message.to_json_bytes()
    return body, signed_headers(target.secret.read(), int(now), body, message.key)


KIND = ChannelKind(
    "signed",
    SignedTarget,
    "a signed JSON webhook",
    from_setting=from_setting,
    render=render,
)
