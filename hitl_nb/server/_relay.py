"""What JupyterLab's prompts panel shows, kept by the Jupyter server for its pages.

A :class:`Relay` follows one source of open prompts and keeps its list for the pages of
this server:

- :class:`LocalSource`: this server's own gateway (its feed, in this process), as the
  user of the pages (a relay per user the IdentityProvider names; the one
  anonymous user of a token server);
- :class:`RemoteSource`: on a JupyterHub that runs the hitl service, that service's
  ``api/feed`` (server-sent events), with the server owner's API token: there the
  hub's kernels register their tasks, and the service says which prompts the owner may
  answer. One relay, as the owner (who else can use this server can use the owner's
  kernels, which hold the same token). The same for a gateway the server's environment
  names (``HITL_NB_GATEWAY``), where its kernels register too.

Each change gets the next number (``seq``); the relay keeps the list and the keys that
changed recently, so a page asks for what changed since the number it has
(:meth:`Relay.since`). The pages are told that something changed through jupyter-server's
event bus (jupyter_events; JupyterLab subscribes at ``/api/events/subscribe``):
``{"feed", "epoch", "seq"}`` and never a prompt, because the bus sends every event to
every subscriber of the server and keeps sending to a socket opened before its user
logged out; a page reads the prompts with its own login, and a page logged out reads
nothing.

A source that fails is said once (the status becomes ``unavailable`` with the reason),
tried again with a growing pause (1 s to 30 s), and a snapshot follows when it answers.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from hitl_nb._backoff import Backoff
from hitl_nb._json import parse_json
from hitl_nb.client import GatewayInfo, find_prompt, http_client, read_feed
from hitl_nb.errors import BadJSON, GatewayUnavailable, HitlError
from hitl_nb.gateway import ApiRequest, Caller, FeedChange, Gateway, GatewayAPI, GatewayError

__all__ = ["LocalSource", "Relay", "RemoteSource", "Source"]

log = logging.getLogger("hitl_nb.server")

#: The changed keys a relay remembers; a page further behind gets the whole list.
MAX_LOG = 50_000
#: Seconds the hub's feed may stay silent (it pings every 15) before it is given up.
HUB_READ_TIMEOUT = 45.0
#: The largest event read from the hub's feed (its events are about 256 KiB).
MAX_HUB_EVENT = 4 * 1024 * 1024
#: The pauses before following the source again after it failed.
RETRY = Backoff(1.0, 30.0)
#: JSON nesting read from the service: an envelope's response_schema may nest 128 levels.
_DEPTH = 256


class Source(Protocol):
    """Where a relay's prompts come from."""

    #: The source in words ("this server's gateway", "the hub's hitl service").
    where: str
    #: Where answers go and prompts are registered: "server" or "hub".
    kind: str

    def changes(self) -> AsyncIterator[FeedChange]:
        """The list (a snapshot first), then each change, until the source ends."""
        ...

    async def prompt(self, registration: str, prompt_id: str) -> dict[str, Any] | None:
        """The gateway's whole view of one prompt (its whole question), or None."""
        ...

    async def answer(self, registration: str, prompt_id: str, body: bytes) -> tuple[int, Any]:
        """Send a page's answer (``{"payload": ...}``, as the page wrote it) where the
        panel's kernel card sent it; the gateway's status and reply, unchanged."""
        ...


class LocalSource:
    """This server's own gateway, as ``caller`` sees it."""

    kind = "server"
    where = "this server's gateway"

    def __init__(self, gateway: Gateway, caller: Caller) -> None:
        self.gateway = gateway
        self.caller = caller

    def changes(self) -> AsyncIterator[FeedChange]:
        """The gateway's feed for the caller."""
        return self.gateway.feed.follow(self.caller)

    async def prompt(self, registration: str, prompt_id: str) -> dict[str, Any] | None:
        """The prompt as the gateway shows it to the caller (None: not theirs, or gone)."""
        try:
            view = await self.gateway.registration(registration, self.caller)
        except GatewayError:
            return None
        return find_prompt(view, prompt_id)

    async def answer(self, registration: str, prompt_id: str, body: bytes) -> tuple[int, Any]:
        """The gateway's reply to the caller's answer (its API's own route: the same
        checks, statuses and words as ``POST hitl/api/tasks/.../answer``)."""
        request = ApiRequest("POST", (registration, prompt_id), {}, body, "application/json")
        reply = await GatewayAPI(self.gateway).handle("answer", self.caller, request)
        return reply.status, reply.body


class RemoteSource:
    """Another process's gateway (the hub's hitl service), followed over HTTP with the
    token the server's environment gives (the owner's). ``info``: where it is; or
    ``find``, which looks for it (again at each connection while it cannot be found)."""

    def __init__(
        self,
        info: GatewayInfo | None = None,
        *,
        find: Callable[[], GatewayInfo] | None = None,
    ) -> None:
        if info is None and find is None:
            raise TypeError("a RemoteSource needs info= or find=")
        self.info = info
        self._find = find
        self.kind = "hub" if info is None or info.on_hub else "server"
        self.where = "the hub's hitl service" if self.kind == "hub" else "the gateway"
        if info is not None:
            self.where += f" ({info.url})"

    async def _info(self) -> GatewayInfo:
        if self.info is None:
            assert self._find is not None
            self.info = await asyncio.to_thread(self._find)  # GatewayUnavailable: not now
            self.where = f"the hub's hitl service ({self.info.url})"
        return self.info

    def _client(self, info: GatewayInfo) -> httpx.AsyncClient:
        headers = {"Authorization": f"token {info.token}"} if info.token else {}
        return http_client(headers=headers, timeout=httpx.Timeout(30.0, read=HUB_READ_TIMEOUT))

    async def changes(self) -> AsyncIterator[FeedChange]:
        """Read the service's feed; each ``synced`` event makes one change."""
        info = await self._info()
        async with self._client(info) as http:
            updates = read_feed(
                http, info.api_url + "feed", where=self.where, max_event_size=MAX_HUB_EVENT
            )
            async for u in updates:
                yield FeedChange(u.reset, u.items, u.removed, u.total, u.problem)

    async def prompt(self, registration: str, prompt_id: str) -> dict[str, Any] | None:
        """The prompt as the service shows it to the owner (None: not theirs, or gone)."""
        info = await self._info()
        url = info.api_url + "tasks/" + quote(registration, safe="")
        try:
            async with self._client(info) as http:
                response = await http.get(url)
        except httpx.HTTPError as exc:
            raise GatewayUnavailable(f"{self.where} could not be reached: {exc}") from exc
        if response.status_code != 200:
            return None
        try:
            view = parse_json(response.content, max_bytes=MAX_HUB_EVENT, max_depth=_DEPTH)
            return find_prompt(view, prompt_id)
        except BadJSON:
            return None

    async def answer(self, registration: str, prompt_id: str, body: bytes) -> tuple[int, Any]:
        """The service's reply to the owner's answer, sent with the owner's token: the
        way the panel's kernel card answers on a hub (its kernel holds the same token)."""
        info = await self._info()
        url = (
            f"{info.api_url}tasks/{quote(registration, safe='')}"
            f"/prompts/{quote(prompt_id, safe='')}/answer"
        )
        headers = {"Content-Type": "application/json"}
        try:
            async with self._client(info) as http:
                response = await http.post(url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise GatewayUnavailable(f"{self.where} could not be reached: {exc}") from exc
        try:
            reply = parse_json(response.content, max_bytes=MAX_HUB_EVENT, max_depth=_DEPTH)
        except BadJSON:
            reply = {"error": response.status_code, "message": response.text[:500]}
        return response.status_code, reply


class Relay:
    """One source's open prompts, kept for this server's pages (see the module doc).

    ``announce`` is called with ``{"feed", "epoch", "seq"}`` after each change (the
    host emits it on the event bus). ``feed`` names the relay in those events.
    """

    def __init__(self, source: Source, feed: str, announce: Callable[[dict[str, Any]], None]):
        self.source = source
        self.feed = feed
        self._announce = announce
        #: Changes on each start of the server (a page's numbers from before mean nothing).
        self.epoch = uuid.uuid4().hex[:16]
        self.seq = 0
        self.items: dict[str, dict[str, Any]] = {}
        self.total = 0
        #: (seq, key) of recent changes; complete for every seq from ``_log_from`` on.
        self._log: deque[tuple[int, str]] = deque()
        self._log_from = 0
        self.status: dict[str, Any] = {"state": "connecting", "message": ""}
        self._first = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: When a page last asked (the host lets go of relays nobody asks for).
        self.used = time.monotonic()

    def start(self) -> None:
        """Follow the source in the background (again, after :meth:`stop`)."""
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop following."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def ready(self, timeout: float) -> None:
        """Until the first snapshot (or the first failure) is in, at most ``timeout`` s."""
        try:
            await asyncio.wait_for(self._first.wait(), timeout)
        except asyncio.TimeoutError:
            pass

    async def _run(self) -> None:
        pause = RETRY.first
        while True:
            try:
                async for change in self.source.changes():
                    self._apply(change)
                    if change.problem is None:
                        pause = RETRY.first
                raise GatewayUnavailable(f"{self.source.where} ended the feed")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a relay must never stop following for good
                self._problem(str(exc) if isinstance(exc, HitlError) else repr(exc))
            await asyncio.sleep(pause)
            pause = RETRY.after(pause)

    def _problem(self, message: str) -> None:
        if self.status.get("state") != "unavailable":
            log.warning("hitl-nb: the prompts panel's source is unavailable: %s", message)
            self.status = {"state": "unavailable", "message": message, "where": self.source.where}
            self._bump([])
        self._first.set()

    def _apply(self, change: FeedChange) -> None:
        if change.problem is not None:
            self._problem(change.problem)
            return
        recovered = self.status.get("state") != "ok"
        if recovered and self.status.get("state") == "unavailable":
            log.warning("hitl-nb: the prompts panel's source answers again")
        self.status = {"state": "ok", "message": "", "where": self.source.where}
        self.total = change.total
        if change.reset:
            self.items = {item["key"]: item for item in change.items}
            self._log.clear()
            self.seq += 1
            self._log_from = self.seq  # a page behind this number gets the whole list
            self._tell()
        else:
            keys = [item["key"] for item in change.items] + list(change.removed)
            for item in change.items:
                self.items[item["key"]] = item
            for key in change.removed:
                self.items.pop(key, None)
            self._bump(keys)
        self._first.set()

    def _bump(self, keys: list[str]) -> None:
        self.seq += 1
        for key in keys:
            self._log.append((self.seq, key))
        while len(self._log) > MAX_LOG:
            self._log_from = self._log.popleft()[0]
        self._tell()

    def touch(self, which: Callable[[dict[str, Any]], bool]) -> None:
        """Pages read these items again (what the host adds to them changed: where
        their card is)."""
        keys = [key for key, item in self.items.items() if which(item)]
        if keys:
            self._bump(keys)

    def _tell(self) -> None:
        try:
            self._announce({"feed": self.feed, "epoch": self.epoch, "seq": self.seq})
        except Exception:  # the event bus must not stop the relay
            log.exception("hitl-nb: could not announce a change of the prompts")

    def since(self, epoch: str | None, seq: int | None) -> dict[str, Any]:
        """What a page needs to be current: the changes after ``seq`` when it has this
        relay's ``epoch`` and that is recent enough, else the whole list (``full``)."""
        self.used = time.monotonic()
        head = {
            "feed": self.feed,
            "epoch": self.epoch,
            "seq": self.seq,
            "status": dict(self.status),
            "source": {"kind": self.source.kind, "where": self.source.where},
            "total": self.total,
            "now": time.time(),  # deadlines are this clock's: a page corrects for its own
        }
        if epoch == self.epoch and seq is not None and self._log_from <= seq <= self.seq:
            keys = {key for at, key in self._log if at > seq}
            return {
                **head,
                "full": False,
                "upsert": [self.items[k] for k in keys if k in self.items],
                "remove": sorted(k for k in keys if k not in self.items),
            }
        return {**head, "full": True, "items": list(self.items.values())}
