"""How the gateway talks to agents: one client per agent, under the client's limits.

Agent URLs come from users, so every request the gateway makes goes through one
``httpx.AsyncClient`` whose request hook enforces the administrator's allow-list
(``allowed_agent_hosts``) on *every* request, including the interfaces an
agent's card points to. Redirects are never followed (httpx's default, and the client
refuses them), bodies and events are capped by :class:`~hitl_nb.client.HttpLimits`.

The mock agent a host serves itself (the Jupyter server's, the hub service's) is reached
through the host's own URL; those requests (and only those: same port, loopback, under
the mount path) carry a per-process secret that the hosted handlers accept in place of a
user's token.
"""

from __future__ import annotations

import fnmatch
import hmac
import ipaddress
import secrets
from collections.abc import AsyncIterator, Callable, Iterable
from urllib.parse import urlsplit

import httpx

from hitl_nb.client import HitlClient, HttpLimits, http_client, tls_context
from hitl_nb.errors import AgentNotAllowed
from hitl_nb.gateway._lane import Lane

__all__ = ["GATEWAY_HEADER", "AgentPool", "InternalCaller", "check_agent_url"]

#: The header carrying the gateway's per-process secret to the hosted mock agent.
GATEWAY_HEADER = "X-Hitl-Gateway"


def check_agent_url(url: str, allowed_hosts: Iterable[str]) -> str:
    """``url`` if users may register it (http(s), no credentials, host allowed)."""
    if not isinstance(url, str) or len(url) > 2048:
        raise AgentNotAllowed("agent_url must be a string of at most 2048 characters")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AgentNotAllowed(f"agent_url must be an absolute http(s) URL, got {url!r}")
    if parts.username or parts.password:
        raise AgentNotAllowed("agent_url must not carry a user name or password")
    if not host_allowed(parts.hostname, parts.port, parts.scheme, allowed_hosts):
        raise AgentNotAllowed(_not_allowed(parts.hostname))
    return url.strip()


def _not_allowed(host: str) -> str:
    return (
        f"agent host {host!r} is not allowed here (the administrator's allowed_agent_hosts "
        "lists the agents this gateway may reach)"
    )


def host_allowed(host: str, port: int | None, scheme: str, allowed: Iterable[str]) -> bool:
    """Is ``host`` (and port) on the allow-list? An empty list allows every host."""
    patterns = [p.strip().lower() for p in allowed if p.strip()]
    if not patterns:
        return True
    host = host.lower().strip("[]")
    port = port or (443 if scheme == "https" else 80)
    for pattern in patterns:
        name, _, want_port = pattern.rpartition(":") if _has_port(pattern) else (pattern, "", "")
        if want_port and want_port != str(port):
            continue
        if fnmatch.fnmatchcase(host, name.strip("[]")):
            return True
    return False


def _has_port(pattern: str) -> bool:
    head, sep, tail = pattern.rpartition(":")
    return bool(sep) and tail.isdigit() and not head.endswith(":") and "]" not in tail


class InternalCaller:
    """The gateway's own credentials for the hosted mock agent (a random secret)."""

    def __init__(self, port: int, mount_path: str) -> None:
        self.secret = secrets.token_urlsafe(32)
        self.port = port
        self.mount_path = mount_path.rstrip("/")

    def is_own(self, url: httpx.URL) -> bool:
        """Is ``url`` the hosted mock agent of this very host?"""
        path = url.raw_path.decode("ascii", "replace").split("?", 1)[0]  # as sent, escaped
        if url.port != self.port or not path.startswith(self.mount_path + "/"):
            return False
        host = url.host.strip("[]")
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def accepts(self, value: str | None) -> bool:
        """Does a request's :data:`GATEWAY_HEADER` carry the secret?"""
        return value is not None and hmac.compare_digest(value.encode(), self.secret.encode())


#: Connections for requests to agents (subscriptions apart), each kept from one request to
#: the next: what one event loop has in flight at once, with room. See :class:`_Lanes`.
REQUEST_CONNECTIONS = 10


class _Counted(httpx.AsyncByteStream):
    """An answer's body that says when it was closed (its lane is free again)."""

    def __init__(self, inner: httpx.AsyncByteStream, closed: Callable[[], None]) -> None:
        self._inner = inner
        self._closed = closed

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            self._closed()


class _Lanes(httpx.AsyncBaseTransport):
    """How the gateway's requests reach agents: subscriptions (``Accept:
    text/event-stream``) on connections of their own, every other request on one of
    ``requests`` lanes of one kept connection each (:class:`~hitl_nb.gateway._lane.Lane`):
    the least busy lane, one that last went to the same agent when several are (else one
    not used yet).

    Why lanes rather than one pool: httpcore's pool (1.0) goes over every connection it
    holds, again for each idle one, and polls each idle socket, whenever a request
    starts or ends (encode/httpcore#1035): its cost grows with the square of its
    connections. Sized for every open subscription, it made a third of the hub
    service's function calls per answer, and closed and reopened connections beyond the
    twenty it kept. A lane holds one connection: nothing to go over.
    """

    def __init__(self, streams: int, requests: int) -> None:
        self._streams = httpx.AsyncHTTPTransport(
            verify=tls_context(),
            limits=httpx.Limits(max_connections=streams, max_keepalive_connections=streams),
        )
        self._lanes = [Lane(tls_context) for _ in range(requests)]
        self._busy = [0] * requests
        self._went_to: list[tuple[bytes, bytes, int | None] | None] = [None] * requests

    def _lane(self, origin: tuple[bytes, bytes, int | None]) -> int:
        least = min(self._busy)
        free = [i for i, busy in enumerate(self._busy) if busy == least]
        same = (i for i in free if self._went_to[i] == origin)
        unused = (i for i in free if self._went_to[i] is None)
        return next(same, next(unused, free[0]))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` on a subscription's connection or on a lane."""
        if request.headers.get("accept") == "text/event-stream":
            return await self._streams.handle_async_request(request)
        url = request.url
        origin = (url.raw_scheme, url.raw_host, url.port)
        lane = self._lane(origin)
        self._busy[lane] += 1
        self._went_to[lane] = origin

        def closed() -> None:
            self._busy[lane] -= 1

        try:
            response = await self._lanes[lane].handle_async_request(request)
        except BaseException:
            closed()
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Counted(response.stream, closed),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        """Close every connection."""
        await self._streams.aclose()
        for lane in self._lanes:
            await lane.aclose()


class AgentPool:
    """One :class:`HitlClient` per agent URL, sharing one guarded httpx client."""

    def __init__(
        self,
        allowed_hosts: Iterable[str],
        timeout: float,
        internal: InternalCaller | None = None,
        streams: int = 20,
    ) -> None:
        self.allowed_hosts = list(allowed_hosts)
        self.internal = internal
        self.limits = HttpLimits(timeout=timeout, connect_timeout=min(timeout, 5.0))
        self._http = http_client(
            event_hooks={"request": [self._guard]},
            transport=_Lanes(streams, REQUEST_CONNECTIONS),
        )
        self._clients: dict[str, HitlClient] = {}

    async def _guard(self, request: httpx.Request) -> None:
        url = request.url
        own = self.internal is not None and self.internal.is_own(url)
        if not own and not host_allowed(url.host, url.port, url.scheme, self.allowed_hosts):
            raise AgentNotAllowed(_not_allowed(url.host))
        request.headers.pop(GATEWAY_HEADER, None)
        if own and self.internal is not None:
            request.headers[GATEWAY_HEADER] = self.internal.secret

    def client(self, agent_url: str) -> HitlClient:
        """The client of ``agent_url`` (made on first use)."""
        client = self._clients.get(agent_url)
        if client is None:
            client = HitlClient(agent_url, httpx_client=self._http, limits=self.limits)
            self._clients[agent_url] = client
        return client

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()
