"""The gateway's REST API under ``{base_url}hitl/api/``.

Every route is a jupyter-server ``APIHandler``: the IdentityProvider says who is asking
(``@web.authenticated``: 403 without a user), the Authorizer decides
(``@authorized`` on the ``hitl`` resource), and a browser's cookie-authenticated POST
needs the XSRF token (token-authenticated clients do not). Who answers is *only* the
authenticated user: no header or body member can name someone else.

::

    GET  hitl/api/me                                   who the server says you are
    GET  hitl/api/tasks                                registered tasks
    POST hitl/api/tasks       {"agent_url", "task_id"} register one (201; 200 if known)
    GET  hitl/api/tasks/{id}                           one, with its prompts
    GET  hitl/api/tasks/{id}/prompts                   (the same)
    GET  hitl/api/prompts?agent=&responder=&due_within=&limit=
                                                       open prompts of every task,
                                                       soonest deadline first
    POST hitl/api/tasks/{id}/prompts/{prompt_id}/answer   {"payload": {...}}
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider
from jupyter_server.base.handlers import APIHandler
from tornado import web

from hitl_nb._json import parse_json
from hitl_nb.errors import BadJSON
from hitl_nb.server._gateway import Caller, Gateway, GatewayError
from hitl_nb.server._hosted import AUTH_RESOURCE

__all__ = ["MAX_REQUEST_BYTES", "gateway_handlers"]

#: The largest request body the gateway reads (an answer is far smaller).
MAX_REQUEST_BYTES = 256 * 1024
_MAX_DEPTH = 40
_ANONYMOUS_PROVIDERS = (IdentityProvider, PasswordIdentityProvider)


class GatewayHandler(APIHandler):
    """Shared by the gateway's routes: the gateway, the caller, JSON in and out."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, gateway: Gateway) -> None:
        """Tornado hook: receive the gateway."""
        self.gateway = gateway

    def caller(self) -> Caller:
        """The authenticated user, as the gateway sees them.

        jupyter-server's own providers give every token holder a fresh random
        "anonymous" user: such a server cannot tell its users apart, so the caller has
        no name (``specific:`` and ``consensus:N`` prompts are then refused).
        """
        user = self.current_user
        display = getattr(user, "display_name", None) or getattr(user, "username", "someone")
        if type(self.identity_provider) in _ANONYMOUS_PROVIDERS:
            return Caller(None, "the server's user")
        return Caller(str(user.username), str(display))

    def body(self) -> dict[str, Any]:
        """The request body: a JSON object within the size and depth caps (else 4xx)."""
        raw = self.request.body
        if len(raw) > MAX_REQUEST_BYTES:
            raise GatewayError(413, f"the request body is {len(raw)} bytes; the limit is "
                               f"{MAX_REQUEST_BYTES}")  # fmt: skip
        media = self.request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if media and media != "application/json" and not media.endswith("+json"):
            raise GatewayError(415, f"send the body as application/json, not {media!r}")
        try:
            value = parse_json(raw, max_bytes=MAX_REQUEST_BYTES, max_depth=_MAX_DEPTH)
        except BadJSON as exc:
            raise GatewayError(400, f"the request body is not acceptable JSON: {exc}") from None
        if not isinstance(value, dict):
            raise GatewayError(400, "the request body must be a JSON object")
        return value

    def reply(self, status: int, body: Any) -> None:
        """Finish with ``status`` and a JSON body."""
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def _handle_request_exception(self, e: BaseException) -> None:
        if isinstance(e, GatewayError):
            self.reply(e.status, {"error": e.status, "message": e.message, **e.extra})
            return
        super()._handle_request_exception(e)


class MeHandler(GatewayHandler):
    """``GET hitl/api/me``."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """Who the server says the caller is."""
        caller = self.caller()
        self.reply(200, {"name": caller.name, "display_name": caller.display,
                         "identified": caller.name is not None})  # fmt: skip


class TasksHandler(GatewayHandler):
    """``GET|POST hitl/api/tasks``."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """The registered tasks."""
        self.reply(200, {"tasks": self.gateway.registrations()})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        """Register a task: ``{"agent_url": ..., "task_id": ...}``."""
        body = self.body()
        unknown = sorted(set(body) - {"agent_url", "task_id"})
        if unknown:
            raise GatewayError(400, f"unknown member(s) {', '.join(unknown)}; send agent_url "
                               "and task_id")  # fmt: skip
        for key in ("agent_url", "task_id"):
            if key not in body:
                raise GatewayError(400, f"{key} is required")
        created, view = await self.gateway.register(
            self.caller(), body["agent_url"], body["task_id"]
        )
        self.reply(201 if created else 200, view)


class TaskHandler(GatewayHandler):
    """``GET hitl/api/tasks/{id}`` and ``.../prompts``."""

    @web.authenticated
    @authorized
    async def get(self, reg_id: str) -> None:
        """The registration and its prompts."""
        self.reply(200, await self.gateway.prompts(reg_id, self.caller()))


class InboxHandler(GatewayHandler):
    """``GET hitl/api/prompts``: open prompts across tasks and agents."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """Filters: ``agent`` (URL), ``responder`` (a user name, or ``me``),
        ``due_within`` (seconds), ``limit`` (1..5000, default 1000)."""
        agent = self.get_query_argument("agent", None)
        responder = self.get_query_argument("responder", None)
        due = self._number("due_within", 0, 10 * 365 * 86400)
        limit = self._number("limit", 1, 5000)
        self.reply(200, self.gateway.inbox(
            self.caller(), agent=agent, responder=responder or None, due_within=due,
            limit=int(limit) if limit is not None else 1000,
        ))  # fmt: skip

    def _number(self, name: str, low: float, high: float) -> float | None:
        raw = self.get_query_argument(name, None)
        if raw is None or raw == "":
            return None
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")
        if not low <= value <= high:  # also refuses NaN
            raise GatewayError(400, f"{name} must be a number from {low:g} to {high:g}")
        return value


class AnswerHandler(GatewayHandler):
    """``POST hitl/api/tasks/{id}/prompts/{prompt_id}/answer``."""

    @web.authenticated
    @authorized
    async def post(self, reg_id: str, prompt_id: str) -> None:
        """One user's answer: ``{"payload": {...}}``."""
        body = self.body()
        unknown = sorted(set(body) - {"payload"})
        if unknown:
            raise GatewayError(400, f"unknown member(s) {', '.join(unknown)}: send only "
                               "payload (who answers is the logged-in user)")  # fmt: skip
        if "payload" not in body:
            raise GatewayError(400, "payload is required")
        outcome = await self.gateway.answer(reg_id, prompt_id, self.caller(), body["payload"])
        self.reply(outcome.status, outcome.body)


def gateway_handlers(api: str, gateway: Gateway) -> list[tuple[str, type, dict[str, Any]]]:
    """The gateway's routes under ``api`` (``{base_url}hitl/api``)."""
    api = api.rstrip("/")
    kw = {"gateway": gateway}
    seg = r"([A-Za-z0-9_.:-]{1,256})"
    return [
        (rf"{api}/me", MeHandler, kw),
        (rf"{api}/tasks", TasksHandler, kw),
        (rf"{api}/prompts", InboxHandler, kw),
        (rf"{api}/tasks/{seg}(?:/prompts)?", TaskHandler, kw),
        (rf"{api}/tasks/{seg}/prompts/{seg}/answer", AnswerHandler, kw),
    ]
