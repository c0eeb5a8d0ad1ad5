"""The gateway's REST API under ``{base_url}hitl/api/``, behind the Jupyter server's login.

Each route (:class:`~hitl_nb.gateway.GatewayAPI`) is served by one jupyter-server
``APIHandler``: the IdentityProvider says who is asking (``@web.authenticated``: 403
without a user), the Authorizer decides (``@authorized`` on the ``hitl`` resource), and
a browser's cookie-authenticated POST needs the XSRF token (token-authenticated clients
do not). The user becomes the :class:`~hitl_nb.gateway.Caller` (:func:`caller_of`);
nothing else in the request can. ``GET {base_url}hitl/api/feed`` is the gateway's feed
of the open prompts the caller may answer (``?registered=mine``: of the tasks they
registered), as server-sent events (:mod:`hitl_nb.gateway._feed_route`).
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider
from jupyter_server.base.handlers import APIHandler
from tornado import web

from hitl_nb.errors import reason_phrase
from hitl_nb.gateway import ApiRequest, Caller, FeedStream, Gateway, GatewayAPI
from hitl_nb.server._hosted import AUTH_RESOURCE

__all__ = ["caller_of", "gateway_handlers"]

_ANONYMOUS_PROVIDERS = (IdentityProvider, PasswordIdentityProvider)


def caller_of(handler: Any) -> Caller:
    """The authenticated user of a jupyter-server handler, as the gateway sees them.

    jupyter-server's own providers give every token holder a fresh random "anonymous"
    user: such a server cannot tell its users apart, so the caller has no name
    (``specific:`` and ``consensus:N`` prompts are then refused).
    """
    user = handler.current_user
    display = getattr(user, "display_name", None) or getattr(user, "username", "someone")
    if type(handler.identity_provider) in _ANONYMOUS_PROVIDERS:
        return Caller(None, "the server's user")
    return Caller(str(user.username), str(display))


class GatewayRoute(APIHandler):
    """One route of the gateway's API, as the Jupyter server serves it."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, api: GatewayAPI, route: str) -> None:
        """Tornado hook: receive the API and this handler's route name."""
        self.api = api
        self.route = route

    def caller(self) -> Caller:
        """The authenticated user, as the gateway sees them (:func:`caller_of`)."""
        return caller_of(self)

    async def _serve(self, *args: str) -> None:
        request = ApiRequest(
            method=self.request.method or "GET",
            args=args,
            query={k: self.get_query_argument(k) for k in self.request.query_arguments},
            body=self.request.body or b"",
            content_type=self.request.headers.get("Content-Type", ""),
        )
        reply = await self.api.handle(self.route, self.caller(), request)
        self.set_status(reply.status, reason_phrase(reply.status))
        self.set_header("Content-Type", reply.media)
        self.finish(reply.text())

    @web.authenticated
    @authorized
    async def get(self, *args: str) -> None:
        """A read (``me``, ``tasks``, ``prompts``, ``audit``, one task)."""
        await self._serve(*args)

    @web.authenticated
    @authorized
    async def post(self, *args: str) -> None:
        """A write (register a task, answer a prompt)."""
        await self._serve(*args)

    @web.authenticated
    @authorized
    async def put(self, *args: str) -> None:
        """A change (one's notifications)."""
        await self._serve(*args)


class FeedRoute(APIHandler):
    """``GET {base_url}hitl/api/feed``: the open prompts the caller may answer, as
    server-sent events for as long as the connection lasts."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, gateway: Gateway) -> None:
        """Tornado hook: receive the gateway."""
        self.gateway = gateway
        self.stream = FeedStream()

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The feed (:class:`~hitl_nb.gateway.FeedStream`: ``?registered=mine``, 503
        when it has as many followers as it takes)."""
        await self.stream.serve(self, self.gateway.feed, caller_of(self))

    def on_connection_close(self) -> None:
        """The client went away: stop following."""
        self.stream.close()


def gateway_handlers(api_root: str, api: GatewayAPI) -> list[tuple[str, type, dict[str, Any]]]:
    """The gateway's routes under ``api_root`` (``{base_url}hitl/api``), its feed first."""
    feed: list[tuple[str, type, dict[str, Any]]] = [
        (f"{api_root.rstrip('/')}/feed", FeedRoute, {"gateway": api.gateway})
    ]
    return feed + [
        (pattern, GatewayRoute, {"api": api, "route": name})
        for pattern, name in api.routes(api_root)
    ]
