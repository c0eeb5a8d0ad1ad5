"""Three named users for Jupyter servers in tests: alice, bob and carol.

Each authenticates with ``Authorization: token <name>-token``; :class:`NamedTokens` is
the IdentityProvider. Nothing else in a request (other headers, the body) makes a user.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth import Authorizer, IdentityProvider, User

USERS = ("alice", "bob", "carol")
TOKENS = {f"{name}-token": name for name in USERS}
LOGIN_COOKIE = "test-login"


class NamedTokens(IdentityProvider):  # type: ignore[misc]
    """``Authorization: token alice-token`` is alice; so is a browser whose login cookie
    ``test-login=alice-token`` was set (cookie-authenticated: XSRF applies); anything
    else is nobody."""

    def get_user(self, handler: Any) -> User | None:
        scheme, _, token = handler.request.headers.get("Authorization", "").partition(" ")
        name = TOKENS.get(token.strip()) if scheme.lower() == "token" else None
        if name is not None:
            handler._token_authenticated = True
            return User(username=name, name=name.title())
        name = TOKENS.get(handler.get_cookie(LOGIN_COOKIE) or "")
        return None if name is None else User(username=name, name=name.title())


def auth(user: str) -> dict[str, str]:
    """The header that authenticates ``user``."""
    return {"Authorization": f"token {user}-token"}


def browser(user: str, xsrf: str | None = None) -> dict[str, str]:
    """Headers of a logged-in browser (cookie), with an XSRF token pair when given."""
    cookie = f"{LOGIN_COOKIE}={user}-token"
    headers = {"Authorization": "", "Cookie": cookie}
    if xsrf is not None:
        headers["Cookie"] += f"; _xsrf={xsrf}"
        headers["X-XSRFToken"] = xsrf
    return headers


class NoHitlForBob(Authorizer):  # type: ignore[misc]
    """An Authorizer that lets everyone do everything, except bob on the ``hitl`` resource."""

    def is_authorized(self, handler: Any, user: User, action: str, resource: str) -> bool:
        return not (user.username == "bob" and resource == "hitl")
