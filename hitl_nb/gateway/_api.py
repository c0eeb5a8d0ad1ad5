"""The gateway's REST API, written once for every host.

A host (the Jupyter server extension, the hub service) authenticates the request its
own way, turns the user it vouches for into a :class:`~hitl_nb.gateway.Caller`, and
hands the request to :meth:`GatewayAPI.handle` under the route's name; what comes back
is an :class:`ApiReply` to write. Who answers is *only* that caller: no header or body
member can name someone else. Routes, relative to the API root (``{base_url}hitl/api``
in a Jupyter server, ``{hub}/services/hitl/api`` on a hub)::

    GET  me                                     who the host says you are
    GET  tasks                                  registered tasks
    POST tasks       {"agent_url", "task_id"}   register one (201; 200 if known);
                     (+ "deadline": a policy)   docs/hub.md, deadline policies
                     "two_person": true         the two-person rule for its prompts
    GET  tasks/{id}                             one, with its prompts
    GET  tasks/{id}/prompts                     (the same)
    GET  prompts?agent=&responder=&due_within=&limit=
                                                open prompts of every task,
                                                soonest deadline first
    POST tasks/{id}/prompts/{prompt_id}/answer  {"payload": {...}}
    GET  audit?registration=&after=&limit=&format=json|jsonl
                                                the audit trail (administrators:
                                                all; others: tasks they registered)
    GET  me/notify                              your notifications: on or off, and
                                                your own webhook (else email)
    PUT  me/notify   {"enabled", "webhook"}     change them (the webhook's host
                                                must be on the allow-list)

Bodies are JSON objects within :data:`MAX_REQUEST_BYTES` and 40 levels of nesting
(413, 400), sent as ``application/json`` (415); errors are ``{"error": status,
"message": ...}`` with words a person can act on. When the gateway's database cannot be
reached the answer is 503 and names it (``database``); the request may be sent again
(an answer given twice counts once).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hitl_nb._json import parse_json
from hitl_nb.errors import BadJSON, NotifyRefused
from hitl_nb.gateway._audit import json_lines
from hitl_nb.gateway._gateway import Gateway, GatewayError
from hitl_nb.gateway._notify import Notifier
from hitl_nb.gateway._outbox import NotifyChoice
from hitl_nb.gateway._store import StoreUnavailable, unstorable
from hitl_nb.gateway._views import Caller

__all__ = ["MAX_REQUEST_BYTES", "ApiReply", "ApiRequest", "GatewayAPI", "unavailable"]

#: The largest request body the gateway reads (an answer is far smaller).
MAX_REQUEST_BYTES = 256 * 1024
_MAX_DEPTH = 40
_SEG = r"([A-Za-z0-9_.:-]{1,256})"
#: The media type of the audit trail's JSON lines export.
JSON_LINES = "application/x-ndjson"


@dataclass(frozen=True)
class ApiRequest:
    """What the API reads of a request: ``args`` are the route's path segments,
    ``query`` the first value of each query argument."""

    method: str
    args: tuple[str, ...] = ()
    query: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = ""


@dataclass(frozen=True)
class ApiReply:
    """What the host writes back: ``status``, and ``body`` as JSON (``media`` JSON) or
    as text already (JSON lines)."""

    status: int
    body: Any
    media: str = "application/json"

    def text(self) -> str:
        """The body as it goes on the wire."""
        return self.body if isinstance(self.body, str) else json.dumps(self.body)


def _body(request: ApiRequest) -> dict[str, Any]:
    raw = request.body
    if len(raw) > MAX_REQUEST_BYTES:
        raise GatewayError(
            413, f"the request body is {len(raw)} bytes; the limit is {MAX_REQUEST_BYTES}"
        )
    media = request.content_type.split(";")[0].strip().lower()
    if media and media != "application/json" and not media.endswith("+json"):
        raise GatewayError(415, f"send the body as application/json, not {media!r}")
    try:
        value = parse_json(raw, max_bytes=MAX_REQUEST_BYTES, max_depth=_MAX_DEPTH)
    except BadJSON as exc:
        raise GatewayError(400, f"the request body is not acceptable JSON: {exc}") from None
    if not isinstance(value, dict):
        raise GatewayError(400, "the request body must be a JSON object")
    return value


def _number(request: ApiRequest, name: str, low: float, high: float) -> float | None:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # also refuses NaN
        raise GatewayError(400, f"{name} must be a number from {low:g} to {high:g}")
    return value


Handler = Callable[[Gateway, Caller, ApiRequest], Awaitable[ApiReply]]


async def _me(gateway: Gateway, caller: Caller, request: ApiRequest) -> ApiReply:
    return ApiReply(
        200,
        {
            "name": caller.name,
            "display_name": caller.display,
            "identified": caller.name is not None,
            "admin": caller.admin,
        },
    )


async def _tasks(gateway: Gateway, caller: Caller, request: ApiRequest) -> ApiReply:
    return ApiReply(200, {"tasks": await gateway.registrations(caller)})


async def _register(gateway: Gateway, caller: Caller, request: ApiRequest) -> ApiReply:
    body = _body(request)
    unknown = sorted(set(body) - {"agent_url", "task_id", "deadline", "two_person"})
    if unknown:
        raise GatewayError(
            400,
            f"unknown member(s) {', '.join(unknown)}; send agent_url, task_id and "
            "optionally deadline and two_person",
        )
    for key in ("agent_url", "task_id"):
        if key not in body:
            raise GatewayError(400, f"{key} is required")
    created, view = await gateway.register(
        caller,
        body["agent_url"],
        body["task_id"],
        body.get("deadline"),
        two_person=body.get("two_person"),
    )
    return ApiReply(201 if created else 200, view)


async def _task(gateway: Gateway, caller: Caller, request: ApiRequest) -> ApiReply:
    return ApiReply(200, await gateway.registration(request.args[0], caller))


async def _prompts(gateway: Gateway, caller: Caller, request: ApiRequest) -> ApiReply:
    due = _number(request, "due_within", 0, 10 * 365 * 86400)
    limit = _number(request, "limit", 1, 5000)
    return ApiReply(
        200,
        await gateway.inbox(
            caller,
            agent=request.query.get("agent") or None,
            responder=request.query.get("responder") or None,
            due_within=due,
            limit=int(limit) if limit is not None else 1000,
        ),
    )


async def _answer(gateway: Gateway, caller: Caller, request: ApiRequest) -> ApiReply:
    body = _body(request)
    unknown = sorted(set(body) - {"payload"})
    if unknown:
        raise GatewayError(
            400,
            f"unknown member(s) {', '.join(unknown)}: send only "
            "payload (who answers is the logged-in user)",
        )
    if "payload" not in body:
        raise GatewayError(400, "payload is required")
    reg_id, prompt_id = request.args
    reply = await gateway.answer(reg_id, prompt_id, caller, body["payload"])
    return ApiReply(reply.status, reply.body)


async def _audit(gateway: Gateway, caller: Caller, request: ApiRequest) -> ApiReply:
    form = request.query.get("format") or "json"
    if form not in ("json", "jsonl"):
        raise GatewayError(400, "format must be json or jsonl (JSON lines)")
    after = _number(request, "after", 0, 2**62)
    limit = _number(request, "limit", 1, 100_000)
    entries = await gateway.audit(
        caller,
        request.query.get("registration") or None,
        after=int(after or 0),
        limit=int(limit) if limit is not None else 1000,
    )
    if form == "jsonl":
        return ApiReply(200, json_lines(entries), JSON_LINES)
    last = entries[-1].id if entries else int(after or 0)
    return ApiReply(200, {"entries": [e.to_json() for e in entries], "after": last})


def _notifier(gateway: Gateway, caller: Caller) -> Notifier | None:
    if caller.name is None:
        raise GatewayError(
            403,
            f"{gateway.settings.where} cannot tell its users apart, so nobody has "
            "notifications of their own",
        )
    return gateway.notify


async def _my_notify(gateway: Gateway, caller: Caller, request: ApiRequest) -> ApiReply:
    notify = _notifier(gateway, caller)
    assert caller.name is not None
    choice = await notify.choice(caller.name) if notify is not None else NotifyChoice()
    settings = gateway.settings
    return ApiReply(
        200,
        {
            **choice.to_json(),
            "available": notify is not None,
            "email": bool(settings.notify_smtp_host),
            "webhook_hosts": list(settings.notify_webhook_hosts),
        },
    )


async def _set_my_notify(gateway: Gateway, caller: Caller, request: ApiRequest) -> ApiReply:
    notify = _notifier(gateway, caller)
    assert caller.name is not None
    if notify is None:
        raise GatewayError(409, f"{gateway.settings.where} sends no notifications")
    body = _body(request)
    unknown = sorted(set(body) - {"enabled", "webhook"})
    if unknown:
        raise GatewayError(400, f"unknown member(s) {', '.join(unknown)}: send enabled and webhook")
    before = await notify.choice(caller.name)
    enabled = body.get("enabled", not before.off)
    if not isinstance(enabled, bool):
        raise GatewayError(400, "enabled must be true or false")
    webhook = body.get("webhook", before.webhook)
    if webhook == "":
        webhook = None
    if webhook is not None:
        if not isinstance(webhook, str):
            raise GatewayError(400, "webhook must be a URL, or null for email")
        why = unstorable(webhook)
        if why is not None:
            raise GatewayError(400, f"webhook holds {why}, which the gateway cannot keep")
        try:
            notify.check_webhook(webhook)
        except NotifyRefused as exc:
            raise GatewayError(400, f"this webhook cannot be used: {exc}") from None
    choice = NotifyChoice(off=not enabled, webhook=webhook, updated=time.time())
    await gateway.store.outbox.set_preference(caller.name, choice)
    return await _my_notify(gateway, caller, request)


#: Route name -> (path pattern under the API root, {method: handler}).
ROUTES: dict[str, tuple[str, dict[str, Handler]]] = {
    "me": ("me", {"GET": _me}),
    "tasks": ("tasks", {"GET": _tasks, "POST": _register}),
    "prompts": ("prompts", {"GET": _prompts}),
    "task": (rf"tasks/{_SEG}(?:/prompts)?", {"GET": _task}),
    "answer": (rf"tasks/{_SEG}/prompts/{_SEG}/answer", {"POST": _answer}),
    "audit": ("audit", {"GET": _audit}),
    "notify": ("me/notify", {"GET": _my_notify, "PUT": _set_my_notify}),
}


class GatewayAPI:
    """The REST API over one :class:`~hitl_nb.gateway.Gateway` (see the module
    docstring); hosts give it authenticated requests."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    @staticmethod
    def routes(root: str) -> list[tuple[str, str]]:
        """``(URL pattern, route name)`` for every route under ``root`` (the API's
        path, e.g. ``/hitl/api``)."""
        root = root.rstrip("/")
        return [(f"{root}/{pattern}", name) for name, (pattern, _) in ROUTES.items()]

    @staticmethod
    def methods(route: str) -> list[str]:
        """The HTTP methods ``route`` answers."""
        return sorted(ROUTES[route][1])

    async def handle(self, route: str, caller: Caller, request: ApiRequest) -> ApiReply:
        """Answer one request of ``caller`` on ``route``; refusals become 4xx replies."""
        handlers = ROUTES[route][1]
        handler = handlers.get(request.method.upper())
        if handler is None:
            allowed = ", ".join(sorted(handlers))
            return ApiReply(405, {"error": 405, "message": f"{route} answers {allowed} only"})
        try:
            _check_text(caller, request)
            return await handler(self.gateway, caller, request)
        except GatewayError as exc:
            return ApiReply(exc.status, {"error": exc.status, "message": exc.message, **exc.extra})
        except StoreUnavailable as exc:
            return ApiReply(503, unavailable(exc))


def _check_text(caller: Caller, request: ApiRequest) -> None:
    """Refuse (400) a request whose path, query or caller holds what no store keeps
    (a NUL character: PostgreSQL's text refuses it, so the same on every database)."""
    named = [(f"the path segment {i + 1}", arg) for i, arg in enumerate(request.args)]
    named += [(f"the query argument {key!r}", value) for key, value in request.query.items()]
    named += [(f"the query argument name {key!r}", key) for key in request.query]
    named += [("your user name", caller.name or ""), ("your display name", caller.display)]
    for what, text in named:
        why = unstorable(text)
        if why is not None:
            raise GatewayError(400, f"{what} holds {why}, which the gateway cannot keep")


def unavailable(exc: StoreUnavailable) -> dict[str, Any]:
    """The 503 body when the gateway's database cannot be reached."""
    return {
        "error": 503,
        "message": f"the gateway cannot answer now: {exc.where} cannot be reached "
        f"({exc.detail}). Try again in a moment; an answer sent again counts once.",
        "database": exc.where,
    }
