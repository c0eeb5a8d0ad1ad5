"""A fake Slack on 127.0.0.1 and a request signer, for a Slack app's tests.

:class:`FakeSlack` answers the Web API methods the app calls (``chat.postMessage``,
``chat.update``, ``users.info``, ``users.lookupByEmail``, ``views.open``) under
``{url}/api/``, and receives what is posted to an interaction's ``response_url``
(``{url}/respond/<n>``). Everything it got is kept, in order (each message posted
with the ``ts`` it was given, as ``chat.update`` names it); ``limit_next`` makes
the next calls answer 429 with a ``Retry-After``; ``users_info_gate`` cleared holds
every ``users.info`` (recorded first) until it is set again (a process caught between
a click's acknowledgement and its answer). :func:`sign` signs a request as Slack does
(v0); the tests check it against ``slack_sdk``'s own ``SignatureVerifier``.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlencode

from tests.helpers.tiny_server import Conn, Request, TinyServer

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
TOKEN = "xoxb-0000-test-bot-token"


def sign(body: bytes, secret: str = SECRET, at: float | None = None) -> dict[str, str]:
    """The headers Slack sends with ``body`` (signed at ``at``, default now)."""
    stamp = str(int(time.time() if at is None else at))
    base = b"v0:" + stamp.encode() + b":" + body
    mac = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={mac}",
        "Content-Type": "application/x-www-form-urlencoded",
    }


def click_body(action: dict[str, Any], user: str, response_url: str) -> bytes:
    """Slack's form for a ``block_actions`` click of ``action`` by ``user``."""
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T0TEAM"},
        "team": {"id": "T0TEAM"},
        "channel": {"id": "C0TEAM"},
        "trigger_id": "123.456.abc",
        "response_url": response_url,
        "actions": [{**action, "type": "button", "block_id": "hitl-actions"}],
    }
    return urlencode({"payload": json.dumps(payload)}).encode()


def submit_body(view: dict[str, Any], user: str, values: dict[str, Any]) -> bytes:
    """Slack's form for a ``view_submission`` of ``view`` (as opened) by ``user``, its
    inputs holding ``values`` (``block_id`` -> ``{"value": element state}``)."""
    sent = {**view, "id": "V0001", "state": {"values": values}}
    payload = {
        "type": "view_submission",
        "user": {"id": user, "username": user.lower(), "team_id": "T0TEAM"},
        "team": {"id": "T0TEAM"},
        "view": sent,
    }
    return urlencode({"payload": json.dumps(payload)}).encode()


class FakeSlack:
    """See the module docstring. ``emails``: Slack user id -> their profile's email."""

    def __init__(self, emails: dict[str, str] | None = None) -> None:
        self.emails = dict(emails or {})
        self.calls: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        self.responses: list[dict[str, Any]] = []
        #: Each ``chat.postMessage`` answered: its body and the ``ts`` it was given.
        self.posts: list[tuple[dict[str, Any], str]] = []
        self.limit_next = 0
        self.retry_after = 1
        self.users_info_gate = threading.Event()
        self.users_info_gate.set()
        self._ts = itertools.count(1)
        self._hook = itertools.count(1)
        self._lock = threading.Lock()
        self.server = TinyServer(self._handle)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return self.server.url

    @property
    def api_url(self) -> str:
        """The Web API's root (the app's ``notify_slack_api_url``)."""
        return self.url + "/api/"

    def response_url(self) -> str:
        """A fresh ``response_url`` for one click."""
        return f"{self.url}/respond/{next(self._hook)}"

    def called(self, method: str) -> list[dict[str, Any]]:
        """The bodies of the calls of ``method`` answered ok, in order."""
        with self._lock:
            return [body for name, body, _ in self.calls if name == method]

    def _handle(self, request: Request, conn: Conn) -> None:
        if request.path.startswith("/respond/"):
            with self._lock:
                self.responses.append(request.json())
            conn.answer({"ok": True}, 200)
            return
        method = request.path.removeprefix("/api/")
        kind = request.header("content-type") or ""
        if "json" in kind:
            body = request.json()
        else:
            body = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        headers = {"authorization": request.header("authorization") or ""}
        with self._lock:
            if self.limit_next > 0:
                self.limit_next -= 1
                answer = {"ok": False, "error": "ratelimited"}
                conn.answer(answer, 429, Retry_After=str(self.retry_after))
                return
        if headers["authorization"] != f"Bearer {TOKEN}":
            conn.answer({"ok": False, "error": "invalid_auth"}, 200)
            return
        with self._lock:
            self.calls.append((method, body, headers))
        if method == "chat.postMessage":
            ts = f"1700000000.{next(self._ts):06d}"
            with self._lock:
                self.posts.append((body, ts))
            conn.answer({"ok": True, "channel": body.get("channel"), "ts": ts}, 200)
        elif method in ("chat.update", "views.open"):
            conn.answer({"ok": True, "channel": body.get("channel"), "ts": body.get("ts")}, 200)
        elif method == "users.info":
            self.users_info_gate.wait(120)
            user = body.get("user", "")
            email = self.emails.get(user)
            if email is None:
                conn.answer({"ok": False, "error": "user_not_found"}, 200)
            else:
                profile = {"email": email}
                found = {"id": user, "is_email_confirmed": True, "profile": profile}
                conn.answer({"ok": True, "user": found}, 200)
        elif method == "users.lookupByEmail":
            found = [u for u, e in self.emails.items() if e == body.get("email")]
            if not found:
                conn.answer({"ok": False, "error": "users_not_found"}, 200)
            else:
                conn.answer({"ok": True, "user": {"id": found[0]}}, 200)
        else:
            conn.answer({"ok": False, "error": "unknown_method"}, 200)


@contextmanager
def fake_slack(emails: dict[str, str] | None = None) -> Iterator[FakeSlack]:
    """A running :class:`FakeSlack`, stopped after."""
    slack = FakeSlack(emails)
    slack.server.start()
    try:
        yield slack
    finally:
        slack.server.stop()
