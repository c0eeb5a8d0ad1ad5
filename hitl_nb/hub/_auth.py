"""Who is asking the hub service, as JupyterHub says, and nothing else.

Every request of the service (but push notifications, which carry a task's secret) is
identified by the hub through :class:`jupyterhub.services.auth.HubOAuth`:

- a token in ``Authorization: token ...`` (or ``Bearer``): a kernel's
  ``JUPYTERHUB_API_TOKEN``, a person's own hub token; the hub tells whose it is and
  which scopes it carries (``GET /hub/api/user``, cached for ``cache_max_age`` seconds);
- else the browser's OAuth cookie, set by the service's ``oauth_callback`` after the hub
  login; a cookie-authenticated request that is not a plain page view (a POST, a
  ``fetch``) must carry the XSRF token, or the cookie is not believed.

The token or cookie must carry ``access:services!service=<name>`` (the scope
:func:`hitl_nb.hub.configure` grants every user and their servers' tokens), else 403.
Only people answer prompts: a service's token is refused. Headers such as
``X-Forwarded-User`` are never read.
"""

from __future__ import annotations

from typing import Any

from jupyterhub.services.auth import HubOAuth, UserNotAllowed

from hitl_nb.gateway import Caller

__all__ = ["NotVouched", "caller_of", "hub_user"]


class NotVouched(Exception):
    """The hub does not vouch for this request: HTTP ``status`` (401 or 403) and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _presented(handler: Any, auth: HubOAuth) -> bool:
    """Did the request offer credentials at all (a token, or the service's cookie)?"""
    if auth.get_token(handler, in_cookie=False):
        return True
    return bool(handler.get_cookie(auth.cookie_name))


async def hub_user(handler: Any) -> dict[str, Any]:
    """The hub's model of the user behind ``handler``'s request (raises NotVouched).

    ``handler`` is a :class:`jupyterhub.services.auth.HubOAuthenticated` request handler
    whose ``hub_auth`` is the service's :class:`HubOAuth`.
    """
    auth: HubOAuth = handler.hub_auth
    model = await auth.get_user(handler, sync=False)
    if not model:
        if not _presented(handler, auth):
            raise NotVouched(
                401, "sign in to the hub, or send a hub API token (Authorization: token ...)"
            )
        raise NotVouched(
            403,
            "the hub did not vouch for this request: the token is unknown "
            "or expired, or a browser request came without its XSRF token",
        )
    try:
        allowed = handler.check_hub_user(model)
    except UserNotAllowed:
        allowed = None
    if not allowed:
        scopes = ", ".join(sorted(auth.access_scopes))
        raise NotVouched(
            403,
            f"{model.get('kind', 'user')} {model.get('name')!r} may not use "
            f"this service: the hub gave these credentials no {scopes}",
        )
    if model.get("kind", "user") != "user":
        raise NotVouched(
            403,
            f"the service {model.get('name')!r} is not a person: prompts are "
            "answered and tasks registered with a user's own token",
        )
    return dict(model)


def caller_of(model: dict[str, Any]) -> Caller:
    """The gateway's caller for a hub user model: the hub user name, and whether the
    hub made them an administrator."""
    name = str(model["name"])
    return Caller(name, name, admin=bool(model.get("admin")))
