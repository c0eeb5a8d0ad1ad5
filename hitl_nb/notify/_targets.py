"""Email addresses and webhook URLs, each checked before it is used.

- :func:`check_address`: one plain address (``bob@example.org``: ASCII, no display
  name, nothing a header could be made of), what an
  :class:`~hitl_nb.notify._email.EmailTarget` holds;
- :func:`check_webhook_url`: a URL any webhook kind (:mod:`hitl_nb.notify._registry`)
  posts to;
- :func:`shown_url`: a webhook URL as logs and messages show it.

A webhook's URL comes from the administrator (a team channel: ``admin=True``) or from a
person (their own webhook), whose host must match the administrator's allow-list
(:func:`check_webhook_url`). Either way: http(s) only, no user name or password, no
backslash, space or control character, and the host is read by the same parser that
sends the request (httpx), cross-checked with the standard library's, so no parser
difference can send it elsewhere. A person's webhook more: https unless the allow-list
entry says ``http://``, no IP literal (not even one spelled in decimal or hex) unless an
entry names that very address, and a bare ``*`` allows nothing. The check runs again
before each request, against the allow-list of the moment.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

import httpx

from hitl_nb.errors import NotifyRefused

__all__ = ["check_address", "check_webhook_url", "shown_url"]

MAX_URL = 2048
MAX_ADDRESS = 254
# RFC 5322 atext, dot-separated: what a plain local part may hold.
_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def check_address(address: str) -> str:
    """``address`` if it is one plain email address (``local@domain``, ASCII, the
    domain a host name with a dot); else :class:`~hitl_nb.errors.NotifyRefused`."""
    if not isinstance(address, str) or not address or len(address) > MAX_ADDRESS:
        raise NotifyRefused(f"not an email address: {address!r}")
    local, sep, domain = address.rpartition("@")
    labels = domain.split(".")
    if (
        not sep
        or not _LOCAL.fullmatch(local)
        or len(local) > 64
        or len(labels) < 2
        or not all(_LABEL.fullmatch(label) for label in labels)
    ):
        raise NotifyRefused(f"not an email address: {address!r}")
    return address


def _is_ip_literal(host: str) -> bool:
    """An IP address in any spelling a resolver accepts (``127.0.0.1``, ``[::1]``,
    ``2130706433``, ``0x7f.1``)."""
    bare = host.strip("[]")
    try:
        ipaddress.ip_address(bare)
        return True
    except ValueError:
        pass
    try:
        socket.inet_aton(bare)  # the old spellings getaddrinfo still takes
        return True
    except OSError:
        return False


def _host_of(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL both parsers read alike; else refused."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        raise NotifyRefused(f"a webhook URL must be a string of at most {MAX_URL} characters")
    if any(ch.isspace() or ord(ch) < 0x20 or ch == "\x7f" or ch == "\\" for ch in url):
        raise NotifyRefused("a webhook URL must hold no space, control character or backslash")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        raise NotifyRefused(f"not a URL: {url!r} ({exc})") from None
    split = urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise NotifyRefused(f"a webhook URL must be an absolute http(s) URL, got {url!r}")
    if parsed.userinfo or split.username is not None or split.password is not None:
        raise NotifyRefused("a webhook URL must carry no user name or password")
    host = parsed.raw_host.decode("ascii").lower().rstrip(".")
    other = (split.hostname or "").lower().rstrip(".")
    if host.strip("[]") != other.strip("[]") and host != other.encode("idna").decode("ascii"):
        raise NotifyRefused(f"a webhook URL whose host is ambiguous: {url!r}")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return parsed.scheme, host, port


def _entry_allows(entry: str, scheme: str, host: str, port: int) -> bool:
    pattern = entry.strip().lower()
    plain_http = pattern.startswith("http://")
    pattern = pattern.removeprefix("http://").removeprefix("https://").rstrip("/")
    if scheme == "http" and not plain_http:
        return False
    name, want_port = pattern, ""
    head, sep, tail = pattern.rpartition(":")
    if sep and tail.isdigit() and "]" not in tail and not head.endswith(":"):
        name, want_port = head, tail
    name = name.rstrip(".")
    if want_port and int(want_port) != port:
        return False
    if name in ("", "*"):
        return False  # a bare * would allow every host: the list would mean nothing
    if _is_ip_literal(host):
        return name.strip("[]") == host.strip("[]")  # only the very address, no wildcard
    return fnmatch.fnmatchcase(host, name)


def check_webhook_url(url: str, allowed_hosts: Iterable[str] = (), *, admin: bool = False) -> str:
    """``url`` if a message may be sent there (see the module docstring); else
    :class:`~hitl_nb.errors.NotifyRefused` saying why. ``admin``: the administrator
    gave it (any host); else its host must match an entry of ``allowed_hosts``
    (``hooks.slack.com``, ``*.example.org``, ``chat.example.org:8065``,
    ``http://mattermost.internal`` for plain http)."""
    scheme, host, port = _host_of(url)
    if admin:
        return url
    if not any(_entry_allows(entry, scheme, host, port) for entry in allowed_hosts):
        raise NotifyRefused(
            f"webhook host {host!r} is not on the administrator's list of allowed webhook "
            "hosts" + (" (plain http needs an http:// entry)" if scheme == "http" else "")
        )
    return url


def shown_url(url: str) -> str:
    """A webhook URL as logs and messages show it: scheme and host only (a Slack or
    Mattermost webhook's path is its credential)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError):
        return "a webhook"
    if not parsed.host:
        return "a path on the same host"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{parsed.scheme}://{parsed.host}{port}/..."
