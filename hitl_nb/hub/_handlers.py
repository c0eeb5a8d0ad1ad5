"""The hub service's pages and routes, each behind the hub's login (:mod:`._auth`).

- ``{prefix}api/...``: the gateway's REST API (:class:`~hitl_nb.gateway.GatewayAPI`),
  the same routes and bodies as a Jupyter server's ``{base_url}hitl/api/``; refusals are
  JSON (401 without credentials, 403 with credentials the hub does not vouch for),
  never a redirect: these are API clients. ``{prefix}api/feed`` is the feed of the
  open prompts the caller may answer (server-sent events, :mod:`hitl_nb.gateway._feed`):
  each person's Jupyter server follows it for their JupyterLab's prompts panel;
- ``{prefix}``: a small page for browsers: it sends a person through the hub's login
  (OAuth) and says who the service takes them for; it also sets the ``_xsrf`` cookie a
  browser's script sends back as ``X-XSRFToken`` on POST;
- ``{prefix}oauth_callback``: where the hub's OAuth login returns;
- ``{prefix}metrics``: the gateway's metrics in Prometheus's format, guarded as the
  hub guards its own ``/hub/metrics`` (``authenticate_prometheus``): a token that
  carries the ``read:metrics`` scope (a service's, as Prometheus scrapes with), else 401
  (no token) or 403, each saying why;
- ``{prefix}mock-agent/...`` (when on): the bundled mock agent, behind the same login
  (the gateway reaches it with its per-process secret, as in a Jupyter server).
"""

from __future__ import annotations

import html
import json
from typing import Any

import tornado.web
from jupyterhub.services.auth import HubOAuth, HubOAuthCallbackHandler, HubOAuthenticated

from hitl_nb.errors import reason_phrase
from hitl_nb.gateway import (
    GATEWAY_HEADER,
    METRICS_CONTENT_TYPE,
    ApiRequest,
    FeedStream,
    Gateway,
    GatewayAPI,
    InternalCaller,
)
from hitl_nb.hub._auth import NotVouched, caller_of, hub_user

__all__ = ["METRICS_SCOPE", "api_handlers", "hosted_handlers", "metrics_handlers", "page_handlers"]

#: The scope a token must carry to read the metrics (JupyterHub's own for ``/metrics``).
METRICS_SCOPE = "read:metrics"


class _JSONErrors:
    """Errors of API routes as short JSON bodies (tornado's default is an HTML page)."""

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """``{"error": status, "message": ...}``."""
        handler: Any = self
        reason = handler._reason
        exc = kwargs.get("exc_info", (None, None))[1]
        if isinstance(exc, tornado.web.HTTPError) and exc.log_message:
            reason = exc.log_message % exc.args if exc.args else exc.log_message
        handler.set_header("Content-Type", "application/json")
        handler.finish(json.dumps({"error": status_code, "message": reason}))


class HubRoute(_JSONErrors, HubOAuthenticated, tornado.web.RequestHandler):  # type: ignore[misc]
    """One route of the gateway's API, for the hub's users."""

    def initialize(self, api: GatewayAPI, route: str, hub_auth: HubOAuth) -> None:
        """Tornado hook: the API, this handler's route name, the service's HubOAuth."""
        self.api = api
        self.route = route
        self.hub_auth = hub_auth

    def check_xsrf_cookie(self) -> None:
        """Checked where it matters: a cookie is not believed without it (``_auth``)."""
        HubOAuthenticated.check_xsrf_cookie(self)

    async def _serve(self, *args: str) -> None:
        try:
            caller = caller_of(await hub_user(self))
        except NotVouched as exc:
            self._reply(exc.status, {"error": exc.status, "message": exc.message})
            return
        request = ApiRequest(
            method=self.request.method or "GET",
            args=args,
            query={k: self.get_query_argument(k) for k in self.request.query_arguments},
            body=self.request.body or b"",
            content_type=self.request.headers.get("Content-Type", ""),
        )
        reply = await self.api.handle(self.route, caller, request)
        self.set_status(reply.status, reason_phrase(reply.status))
        self.set_header("Content-Type", reply.media)
        self.finish(reply.text())

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        self.set_status(status, reason_phrase(status))
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    async def get(self, *args: str) -> None:
        """A read (``me``, ``tasks``, ``prompts``, ``audit``, one task)."""
        await self._serve(*args)

    async def post(self, *args: str) -> None:
        """A write (register a task, answer a prompt)."""
        await self._serve(*args)

    async def put(self, *args: str) -> None:
        """A change (one's notifications)."""
        await self._serve(*args)

    async def _refuse(self, *args: str) -> None:
        self.set_header("Allow", ", ".join(self.api.methods(self.route)))
        self._reply(
            405,
            {
                "error": 405,
                "message": f"{self.route} answers {', '.join(self.api.methods(self.route))} only",
            },
        )

    patch = delete = _refuse


class HubFeedRoute(_JSONErrors, HubOAuthenticated, tornado.web.RequestHandler):  # type: ignore[misc]
    """``GET {prefix}api/feed``: the open prompts the caller may answer (``?registered=mine``:
    of the tasks they registered), as server-sent events for as long as the connection
    lasts (:class:`~hitl_nb.gateway.FeedStream`)."""

    def initialize(self, gateway: Gateway, hub_auth: HubOAuth) -> None:
        """Tornado hook: the gateway and the service's HubOAuth."""
        self.gateway = gateway
        self.hub_auth = hub_auth
        self.stream = FeedStream()

    def check_xsrf_cookie(self) -> None:
        """Checked where it matters: a cookie is not believed without it (``_auth``)."""
        HubOAuthenticated.check_xsrf_cookie(self)

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    async def get(self) -> None:
        """The feed (503 when it has as many followers as it takes)."""
        try:
            caller = caller_of(await hub_user(self))
        except NotVouched as exc:
            self._reply(exc.status, {"error": exc.status, "message": exc.message})
            return
        await self.stream.serve(self, self.gateway.feed, caller)

    def on_connection_close(self) -> None:
        """The client went away: stop following."""
        self.stream.close()


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>hitl-nb on this hub</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 2em auto">
<h1>Prompts for people, on this hub</h1>
<p>You are signed in as <strong>{name}</strong>{admin}. Answers you give through this
service are given as {name}: the hub says who you are, nobody else can.</p>
<p>From a notebook on this hub, <code>Inbox()</code> lists the prompts you may answer;
<code>Conversation</code> and <code>PromptCard</code> answer through here by themselves.</p>
<p>The API: <a href="{api}me">{api}</a> (the same routes as a Jupyter server's
<code>hitl/api/</code>).</p>
</body></html>
"""


class LandingPage(HubOAuthenticated, tornado.web.RequestHandler):  # type: ignore[misc]
    """``GET {prefix}``: log in through the hub, then say who you are."""

    def initialize(self, hub_auth: HubOAuth) -> None:
        """Tornado hook: the service's HubOAuth."""
        self.hub_auth = hub_auth

    async def get(self) -> None:
        """The page, or the hub's login first."""
        try:
            model = await hub_user(self)
        except NotVouched as exc:
            if exc.status == 401:
                self.redirect(self.get_login_url())
                return
            raise tornado.web.HTTPError(403, exc.message) from None
        caller = caller_of(model)
        self.xsrf_token  # noqa: B018 - sets the _xsrf cookie a page's script sends back
        name = html.escape(caller.display)
        admin = " (a hub administrator)" if caller.admin else ""
        api = html.escape(self.hub_auth.base_url + "api/")
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(_PAGE.format(name=name, admin=admin, api=api))


class OAuthCallback(HubOAuthCallbackHandler):  # type: ignore[misc]
    """``GET {prefix}oauth_callback``: JupyterHub's own end of the OAuth login."""

    def initialize(self, hub_auth: HubOAuth) -> None:
        """Tornado hook: the service's HubOAuth."""
        self.hub_auth = hub_auth


class _HubGuard(_JSONErrors, HubOAuthenticated):  # type: ignore[misc]
    """The hub's login in front of a foreign handler (the mock agent's): composed as
    ``(_HubGuard, Handler, ...)`` by :func:`hosted_handlers`."""

    hub_auth: HubOAuth
    internal: InternalCaller | None

    async def prepare(self) -> None:
        """Authenticate through the hub (or the gateway's own secret), then the
        handler's own ``prepare``."""
        handler: Any = self
        sent = handler.request.headers.get(GATEWAY_HEADER)
        if sent is not None:
            if self.internal is None or not self.internal.accepts(sent):
                raise tornado.web.HTTPError(403, "authentication required")
        else:
            try:
                await hub_user(handler)
            except NotVouched as exc:
                raise tornado.web.HTTPError(exc.status, exc.message) from None
        rest = super().prepare()
        if rest is not None:
            await rest

    def check_xsrf_cookie(self) -> None:
        """The hub's check (a cookie-authenticated POST needs the XSRF token), not the
        agent's own (it trusts no cookie, a hosted agent does)."""
        HubOAuthenticated.check_xsrf_cookie(self)


def hosted_handlers(
    handlers: list[tuple[str, type, dict[str, Any]]],
    hub_auth: HubOAuth,
    internal: InternalCaller | None,
) -> list[tuple[str, type, dict[str, Any]]]:
    """The mock agent's routes, each behind the hub's login (one guarded subclass per
    handler class, carrying this service's HubOAuth and secret)."""
    made: dict[type, type] = {}
    out = []
    for pattern, cls, kwargs in handlers:
        if cls not in made:
            made[cls] = type(
                f"Hub{cls.__name__}",
                (_HubGuard, cls),
                {"hub_auth": hub_auth, "internal": internal},
            )
        out.append((pattern, made[cls], kwargs))
    return out


def api_handlers(
    root: str, api: GatewayAPI, hub_auth: HubOAuth
) -> list[tuple[str, type, dict[str, Any]]]:
    """The gateway's routes under ``root`` (``{prefix}api``), its feed first."""
    kw: dict[str, Any] = {"api": api, "hub_auth": hub_auth}
    feed: list[tuple[str, type, dict[str, Any]]] = [
        (root.rstrip("/") + "/feed", HubFeedRoute, {"gateway": api.gateway, "hub_auth": hub_auth})
    ]
    return feed + [(pattern, HubRoute, {**kw, "route": name}) for pattern, name in api.routes(root)]


def page_handlers(prefix: str, hub_auth: HubOAuth) -> list[tuple[str, type, dict[str, Any]]]:
    """The landing page and the OAuth callback under ``prefix``."""
    kw = {"hub_auth": hub_auth}
    return [
        (prefix, LandingPage, kw),
        (prefix + "oauth_callback", OAuthCallback, kw),
    ]


class MetricsRoute(tornado.web.RequestHandler):
    """``GET {prefix}metrics``: the gateway's metrics, for a token with
    :data:`METRICS_SCOPE` (asked of the hub, as every token is: cached by HubAuth)."""

    def initialize(self, gateway: Gateway, hub_auth: HubOAuth) -> None:
        """Tornado hook: the gateway and the service's HubOAuth."""
        self.gateway = gateway
        self.hub_auth = hub_auth

    def _refuse(self, status: int, message: str) -> None:
        self.set_status(status, reason_phrase(status))
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": status, "message": message}))

    async def get(self) -> None:
        """The scrape (Prometheus's text format)."""
        auth: HubOAuth = self.hub_auth
        token = auth.get_token(self, in_cookie=False)
        if not token:
            self._refuse(
                401,
                "the metrics need a hub API token with the read:metrics scope "
                "(Authorization: token ...; Prometheus: authorization credentials)",
            )
            return
        model = await auth.user_for_token(token, sync=False)
        if not model:
            self._refuse(403, "the hub does not know this token (unknown or expired)")
            return
        if METRICS_SCOPE not in set(model.get("scopes") or ()):
            self._refuse(
                403,
                f"{model.get('kind', 'user')} {model.get('name')!r}'s token does not carry "
                f"the {METRICS_SCOPE} scope the metrics need (grant it in a role)",
            )
            return
        body = await self.gateway.metrics.exposition()
        self.set_header("Content-Type", METRICS_CONTENT_TYPE)
        self.set_header("Cache-Control", "no-store")
        self.finish(body)


def metrics_handlers(
    prefix: str, gateway: Gateway, hub_auth: HubOAuth
) -> list[tuple[str, type, dict[str, Any]]]:
    """The metrics' route, ``{prefix}metrics``."""
    return [(prefix + "metrics", MetricsRoute, {"gateway": gateway, "hub_auth": hub_auth})]
