"""The mock agent hosted inside a Jupyter server, behind the server's own authentication.

The agent's tornado handlers (:func:`hitl_nb.mock_agent.mock_agent_handlers`) know
nothing about Jupyter. Each is wrapped here in a subclass that puts jupyter-server's
:class:`~jupyter_server.base.handlers.JupyterHandler` after it in the method order:

- ``prepare`` first runs Jupyter's own (host check, the IdentityProvider, CORS, XSRF),
  refuses a request without a user (403, never a login redirect: these are API
  clients), asks the Authorizer for the ``hitl`` resource, then the agent's own
  ``prepare``;
- ``check_xsrf_cookie`` is Jupyter's: a request that authenticated with the token
  (``Authorization: token ...``, what A2A clients send) needs no XSRF token; one that
  authenticated with the browser's cookie does, so another site cannot make a
  logged-in browser talk to the agent;
- errors raised before the agent runs (403 above) are answered as short JSON bodies;
- the server's own gateway reaches its hosted agent with a per-process secret header
  (:class:`~hitl_nb.gateway.InternalCaller`), whatever the identity provider.

Everything else (bindings, SSE, the card) is the agent's. The card builds its URLs from
the request's host and the mount prefix, so they are right behind ``base_url``.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import tornado.web
from jupyter_server.auth import User
from jupyter_server.auth.utils import HTTP_METHOD_TO_AUTH_ACTION
from jupyter_server.base.handlers import JupyterHandler

from hitl_nb.gateway import GATEWAY_HEADER

__all__ = ["AUTH_RESOURCE", "INTERNAL_SETTING", "HostedAuth", "host_handlers"]

#: The web_app setting holding the gateway's :class:`InternalCaller`.
INTERNAL_SETTING = "hitl_nb_internal_caller"

#: The Authorizer resource name of everything this extension serves.
AUTH_RESOURCE = "hitl"


def _own_prepare(handler: tornado.web.RequestHandler) -> Any:
    """The wrapped handler's ``prepare`` (the first one before JupyterHandler's), run."""
    for klass in type(handler).__mro__[2:]:
        if klass is JupyterHandler:
            return None
        if "prepare" in vars(klass):
            return vars(klass)["prepare"](handler)
    return None


class HostedAuth:
    """Jupyter's authentication and authorization in front of a foreign handler.

    A mixin: :func:`hosted` builds ``(HostedAuth, Handler, JupyterHandler)``.
    """

    auth_resource = AUTH_RESOURCE

    async def prepare(self) -> None:
        """Authenticate (IdentityProvider), authorize (Authorizer), then the handler's own."""
        handler: Any = self
        internal = handler.settings.get(INTERNAL_SETTING)
        sent = handler.request.headers.get(GATEWAY_HEADER)
        if sent is not None:
            # The gateway of this very server calling its hosted agent (a secret that
            # never leaves the process but for requests to this mount point).
            if internal is None or not internal.accepts(sent):
                raise tornado.web.HTTPError(403, "authentication required")
            handler.current_user = handler._jupyter_current_user = User("hitl-nb-gateway")
            handler._token_authenticated = True
            rest = _own_prepare(handler)
            if inspect.isawaitable(rest):
                await rest
            return
        await JupyterHandler.prepare(handler, _redirect_to_login=False)
        user = handler.current_user
        if not user:
            raise tornado.web.HTTPError(403, "authentication required")
        method = (handler.request.method or "GET").upper()
        action = HTTP_METHOD_TO_AUTH_ACTION.get(method, "write")
        allowed = handler.authorizer.is_authorized(handler, user, action, self.auth_resource)
        if inspect.isawaitable(allowed):
            allowed = await allowed
        if not allowed:
            raise tornado.web.HTTPError(
                403, f"user is not authorized to {action} on resource: {self.auth_resource}"
            )
        rest = _own_prepare(handler)
        if inspect.isawaitable(rest):
            await rest

    def check_xsrf_cookie(self) -> None:
        """Jupyter's check: skipped for token-authenticated requests, required otherwise."""
        JupyterHandler.check_xsrf_cookie(self)  # type: ignore[arg-type]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """A short JSON error body (these are API routes, not pages)."""
        handler: Any = self
        reason = handler._reason
        exc_info = kwargs.get("exc_info")
        if exc_info is not None:
            exc = exc_info[1]
            if isinstance(exc, tornado.web.HTTPError) and exc.log_message:
                reason = exc.log_message % exc.args if exc.args else exc.log_message
        handler.set_header("Content-Type", "application/json")
        handler.finish(json.dumps({"error": status_code, "message": reason}))


_CACHE: dict[type, type] = {}


def hosted(cls: type) -> type:
    """``cls`` behind Jupyter's authentication (one subclass per class, cached).

    The order matters: ``HostedAuth`` first (its prepare, XSRF check and errors), then
    the agent's class (its methods win over Jupyter's), then JupyterHandler's plumbing.
    """
    made = _CACHE.get(cls)
    if made is None:
        made = type(f"Hosted{cls.__name__}", (HostedAuth, cls, JupyterHandler), {})
        _CACHE[cls] = made
    return made


def host_handlers(
    handlers: list[tuple[str, type, dict[str, Any]]],
) -> list[tuple[str, type, dict[str, Any]]]:
    """The same routes, each handler wrapped by :func:`hosted`."""
    return [(pattern, hosted(cls), kwargs) for pattern, cls, kwargs in handlers]
