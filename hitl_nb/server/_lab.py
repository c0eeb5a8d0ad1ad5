"""The routes JupyterLab's prompts panel reads, under ``{base_url}hitl/lab/``.

- ``GET hitl/lab/prompts?epoch=E&since=N``: the open prompts the page's user may
  answer, from the relay that follows them (:mod:`hitl_nb.server._relay`): the changes
  after number ``N`` of relay ``E``, or the whole list (``full``); with the relay's
  status (``ok``, ``connecting``, ``unavailable`` and why), who the server takes the
  user for (``me``) and the kernel that draws the answer cards (``kernel``);
- ``GET hitl/lab/prompts/<registration>/<prompt_id>``: one prompt as the gateway shows
  it, with its whole question (a list carries the first 1,000 characters);
- ``POST hitl/lab/prompts/<registration>/<prompt_id>/answer`` ``{"payload": ...}``:
  the panel's answer (drawn in the page, no kernel), sent where the panel's kernel card
  sent it: this server's gateway as the page's user, or the hub's hitl service with the
  owner's token; the gateway's status and reply come back unchanged (200/202 with its
  words, 403, 409, 410, 422 with ``validation_errors``);
- ``POST hitl/lab/places`` ``{"agent_url", "task_id", "kernel_id", "cell_id"}``: a
  kernel of this server says which notebook cell shows a task's cards
  (:mod:`hitl_nb.notebook._announce`); each listed prompt of that task then carries
  ``place`` (the kernel and the cell) while the kernel runs: the panel's "Show card".

Both are behind the server's login and the Authorizer's ``hitl`` resource, like the
gateway's API. Pages learn that something changed from the event bus: an event of
:data:`EVENT_SCHEMA` names the relay (``feed``), its ``epoch`` and the new ``seq``.
The routes, the event and what each carries are the contract with the page
(:mod:`hitl_nb._lab_contract`, ``hitl_nb/schemas/lab.schema.json``).

Which source the relays follow is decided once, at the first request: the gateway the
server's kernels register their tasks with (:func:`hitl_nb.client.find_gateway` from the
server's environment: the hub's hitl service on a JupyterHub that runs it, or
``HITL_NB_GATEWAY``), else this server's own.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections import OrderedDict
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from hitl_nb._json import parse_json
from hitl_nb._lab_contract import EVENT_ID, EVENT_SCHEMA, PLACES_ROUTE, PROMPTS_ROUTE
from hitl_nb.client import GatewayInfo, find_gateway
from hitl_nb.errors import BadJSON, GatewayUnavailable, reason_phrase
from hitl_nb.gateway import MAX_REQUEST_BYTES, Caller, Gateway
from hitl_nb.server._handlers import caller_of
from hitl_nb.server._hosted import AUTH_RESOURCE
from hitl_nb.server._relay import LocalSource, Relay, RemoteSource, Source

__all__ = ["EVENT_SCHEMA", "LabFeeds", "lab_handlers"]

log = logging.getLogger("hitl_nb.server")

#: Seconds a first request waits for a relay's first list before answering without it.
FIRST_WAIT = 5.0
#: A relay no page asked for in this many seconds stops (a page asking starts it again).
IDLE_RELAY = 3600.0
#: The places of cards kept (the oldest go first).
MAX_PLACES = 10_000
#: The longest ids a place may have.
_LIMITS = {"agent_url": 2048, "task_id": 256, "kernel_id": 128, "cell_id": 256}


def _task_key(agent_url: str, task_id: str) -> tuple[str, str]:
    return agent_url.strip().rstrip("/"), task_id


def _discover() -> GatewayInfo | RemoteSource | None:
    """The gateway this server's kernels register with, when it is not this server's own
    (blocking: run in a thread)."""
    env = os.environ
    if not env.get("HITL_NB_GATEWAY") and not env.get("JUPYTERHUB_API_URL"):
        return None
    try:
        return find_gateway(connection_file="", strict=True)
    except GatewayUnavailable as exc:
        if isinstance(exc.info, GatewayInfo):
            return exc.info  # there, silent now: the relay says so and tries again
        if env.get("HITL_NB_HUB_SERVICE"):
            # The hub did not say where its service is: looked for at each connection.
            return RemoteSource(find=_hub_service)
        log.warning("hitl-nb: the prompts panel follows this server's gateway: %s", exc)
        return None


def _hub_service() -> GatewayInfo:
    info = find_gateway(connection_file="", strict=True)
    if info is None:
        raise GatewayUnavailable("the hub does not list its hitl service now")
    return info


class LabFeeds:
    """The relays of this server's pages, and the source they follow."""

    def __init__(self, serverapp: Any, gateway: Gateway) -> None:
        self.serverapp = serverapp
        self.gateway = gateway
        self._relays: dict[str, Relay] = {}
        #: Which cell of which kernel shows a task's cards, by (agent URL, task id).
        self._places: OrderedDict[tuple[str, str], dict[str, str]] = OrderedDict()
        self._remote: RemoteSource | None = None
        self._decided: asyncio.Future[None] | None = None
        logger = getattr(serverapp, "event_logger", None)
        self._events = logger
        if logger is not None:
            logger.register_event_schema(EVENT_SCHEMA)

    @property
    def kernel_name(self) -> str:
        """The kernel the panel starts to draw answer cards: the server's default (the
        native kernel, which imports this hitl-nb)."""
        manager = getattr(self.serverapp, "kernel_spec_manager", None)
        name = getattr(manager, "default_kernel_name", None)
        return name if isinstance(name, str) and name else "python3"

    def _announce(self, data: dict[str, Any]) -> None:
        if self._events is not None:
            self._events.emit(schema_id=EVENT_ID, data=data)

    async def _decide(self) -> None:
        try:
            found = await asyncio.to_thread(_discover)
        except Exception:  # never without a panel: this server's own gateway then
            log.exception("hitl-nb: looking for the kernels' gateway failed")
            found = None
        if isinstance(found, GatewayInfo):
            own = self.serverapp.connection_url.rstrip("/")
            if not found.on_hub and found.url.rstrip("/") == own:
                return  # HITL_NB_GATEWAY names this very server
            found = RemoteSource(found)
        self._remote = found

    async def relay(self, caller: Caller) -> Relay:
        """The relay for a page of ``caller`` (started, and its first list awaited)."""
        if self._decided is None:
            self._decided = asyncio.ensure_future(self._decide())
        await asyncio.shield(self._decided)
        source: Source
        if self._remote is not None:
            key, source = "remote", self._remote
        else:
            key = "user:" + (caller.name or "")
            source = LocalSource(self.gateway, caller)
        relay = self._relays.get(key)
        if relay is None:
            relay = self._relays[key] = Relay(source, key, self._announce)
            await self._cull()
        relay.start()
        if relay.status.get("state") == "connecting":
            await relay.ready(FIRST_WAIT)
        return relay

    async def _cull(self) -> None:
        now = time.monotonic()
        for key, relay in list(self._relays.items()):
            if now - relay.used > IDLE_RELAY:
                del self._relays[key]
                await relay.stop()

    def place(self, agent_url: str, task_id: str, kernel_id: str, cell_id: str) -> None:
        """A kernel of this server shows the task's cards in this cell: the pages read
        the task's prompts again, now with their ``place``."""
        key = _task_key(agent_url, task_id)
        self._places[key] = {"kernel_id": kernel_id, "cell_id": cell_id}
        self._places.move_to_end(key)
        while len(self._places) > MAX_PLACES:
            self._places.popitem(last=False)
        for relay in self._relays.values():
            relay.touch(lambda item: _task_key(item["agent_url"], item["task_id"]) == key)

    def placed(self, item: dict[str, Any]) -> dict[str, Any]:
        """``item`` with the place of its card, when a running kernel of this server
        said where it is."""
        agent, task = item.get("agent_url"), item.get("task_id")
        if not isinstance(agent, str) or not isinstance(task, str):
            return item
        where = self._places.get(_task_key(agent, task))
        if where is None or not self.running(where["kernel_id"]):
            return item
        return {**item, "place": dict(where)}

    def running(self, kernel_id: str) -> bool:
        """Does a kernel with this id run in this server?"""
        manager = getattr(self.serverapp, "kernel_manager", None)
        try:
            return manager is not None and kernel_id in manager
        except Exception:
            return False

    async def close(self) -> None:
        """Stop every relay."""
        relays, self._relays = list(self._relays.values()), {}
        for relay in relays:
            await relay.stop()


def _me(caller: Caller) -> dict[str, Any]:
    return {
        "name": caller.name,
        "display_name": caller.display,
        "identified": caller.name is not None,
    }


class PromptsRoute(APIHandler):
    """``GET hitl/lab/prompts``: the page's open prompts, or what changed."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, feeds: LabFeeds) -> None:
        """Tornado hook: the relays."""
        self.feeds = feeds

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The list (``full``) or the changes since ``since`` of relay ``epoch``."""
        epoch = self.get_query_argument("epoch", None)
        raw = self.get_query_argument("since", None)
        since = int(raw) if raw is not None and raw.isdigit() and len(raw) < 19 else None
        caller = caller_of(self)
        relay = await self.feeds.relay(caller)
        body = relay.since(epoch, since)
        for name in ("items", "upsert"):
            if name in body:
                body[name] = [self.feeds.placed(item) for item in body[name]]
        body["me"] = _me(caller)
        body["kernel"] = self.feeds.kernel_name
        self.set_header("Cache-Control", "no-store")
        self.finish(body)


class PromptRoute(APIHandler):
    """``GET hitl/lab/prompts/<registration>/<prompt_id>``: one prompt, whole."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, feeds: LabFeeds) -> None:
        """Tornado hook: the relays."""
        self.feeds = feeds

    @web.authenticated
    @authorized
    async def get(self, registration: str, prompt_id: str) -> None:
        """The prompt as the gateway shows it to this user (404: not theirs, or gone)."""
        relay = await self.feeds.relay(caller_of(self))
        try:
            view = await relay.source.prompt(registration, prompt_id)
        except GatewayUnavailable as exc:
            self.set_status(503)
            self.finish({"error": 503, "message": str(exc)})
            return
        if view is None:
            self.set_status(404)
            self.finish({"error": 404, "message": "no such open prompt for you"})
            return
        self.set_header("Cache-Control", "no-store")
        self.finish({"prompt": view})


class AnswerRoute(APIHandler):
    """``POST hitl/lab/prompts/<registration>/<prompt_id>/answer``: the panel's answer."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, feeds: LabFeeds) -> None:
        """Tornado hook: the relays."""
        self.feeds = feeds

    @web.authenticated
    @authorized
    async def post(self, registration: str, prompt_id: str) -> None:
        """Forward the answer (S-3: the gateway decides who answers) and say its reply.
        A cookie-authenticated page needs the XSRF token (jupyter-server checks it)."""
        raw = self.request.body or b""
        if len(raw) > MAX_REQUEST_BYTES:
            self.set_status(413)
            self.finish({"error": 413, "message": "the answer is larger than the gateway takes"})
            return
        relay = await self.feeds.relay(caller_of(self))
        try:
            status, body = await relay.source.answer(registration, prompt_id, raw)
        except GatewayUnavailable as exc:
            self.set_status(503)
            self.finish({"error": 503, "message": str(exc)})
            return
        self.set_status(status, reason_phrase(status))
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(body))


class PlacesRoute(APIHandler):
    """``POST hitl/lab/places``: a kernel says which cell shows a task's cards."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, feeds: LabFeeds) -> None:
        """Tornado hook: the relays."""
        self.feeds = feeds

    def _refuse(self, status: int, message: str) -> None:
        self.set_status(status)
        self.finish({"error": status, "message": message})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        """Keep the place (204), or say what was wrong with it (400, 404)."""
        raw = self.request.body or b""
        if len(raw) > 16 * 1024:
            self._refuse(413, "a place is a few hundred bytes; this body is too large")
            return
        try:
            body = parse_json(raw, max_bytes=16 * 1024, max_depth=4)
        except BadJSON as exc:
            self._refuse(400, f"the body is not acceptable JSON: {exc}")
            return
        if not isinstance(body, dict) or set(body) != set(_LIMITS):
            self._refuse(400, "send a JSON object with agent_url, task_id, kernel_id, cell_id")
            return
        for name, most in _LIMITS.items():
            value = body[name]
            if not isinstance(value, str) or not 0 < len(value) <= most:
                self._refuse(400, f"{name} must be a string of 1 to {most} characters")
                return
        if not self.feeds.running(body["kernel_id"]):
            self._refuse(404, "no kernel with that id runs in this server")
            return
        self.feeds.place(body["agent_url"], body["task_id"], body["kernel_id"], body["cell_id"])
        self.set_status(204)
        self.finish()


_SEG = r"([A-Za-z0-9_.:-]{1,256})"


def lab_handlers(base_url: str, feeds: LabFeeds) -> list[tuple[str, type, dict[str, Any]]]:
    """The panel's routes under the server's ``base_url`` (the contract's:
    :mod:`hitl_nb._lab_contract`)."""
    prompts = url_path_join(base_url, PROMPTS_ROUTE)
    kw = {"feeds": feeds}
    return [
        (prompts, PromptsRoute, kw),
        (url_path_join(base_url, PLACES_ROUTE), PlacesRoute, kw),
        (f"{prompts}/{_SEG}/{_SEG}", PromptRoute, kw),
        (f"{prompts}/{_SEG}/{_SEG}/answer", AnswerRoute, kw),
    ]
