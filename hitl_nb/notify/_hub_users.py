"""What the hub says about its users, asked by the service with its own token.

``GET {hub}/hub/api/users/{name}`` answers 404 for a name the hub does not know, and
the user's model for one it does. The model holds ``auth_state`` (what the
authenticator kept at login, encrypted in the hub's database) only when the token
carries the ``admin:auth_state`` scope for that user; the request itself needs one of
the ``read:users`` scopes (``read:users:name`` is the least). So the service's role
needs::

    c.JupyterHub.load_roles = [{
        "name": "hitl-notify",
        "scopes": ["read:users:name", "admin:auth_state"],   # "!group=..." narrows both
        "services": ["hitl"],
    }]

and the hub keeps auth state only with ``c.Authenticator.enable_auth_state = True``
and ``JUPYTERHUB_CRYPT_KEY`` set (the ``cryptography`` package installed). Where the
email is inside it is the authenticator's choice: OAuthenticator keeps the identity
provider's user info under ``user_auth_state_key`` (``oauth_user`` for
GenericOAuthenticator, ``github_user`` for GitHub's...), so ``email_key`` is a dotted
path such as ``oauth_user.email``.

Auth state also holds the person's access tokens: :class:`HubDirectory` reads the one
value at ``email_key`` and keeps nothing else, in memory only, for ``ttl`` seconds.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from hitl_nb.client import http_client
from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify._targets import check_address

__all__ = ["HubDirectory", "HubUser"]

#: How many users' answers are kept (the oldest go first).
CACHE_SIZE = 10_000


@dataclass(frozen=True)
class HubUser:
    """A hub user: their name, and the email address their auth state holds at the
    directory's ``email_key`` (None: no such key, or not an address)."""

    name: str
    email: str | None = None


def _dig(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


class HubDirectory:
    """Asks the hub's API who a user is (see the module docstring). ``api_url``: the
    hub's API (``JUPYTERHUB_API_URL``, ending in ``/``); ``token``: the service's
    (``JUPYTERHUB_API_TOKEN``); ``email_key``: where in auth state the email is (None:
    only whether the user exists is asked)."""

    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        email_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        ttl: float = 300.0,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not api_url.startswith(("http://", "https://")):
            raise NotifyRefused(f"the hub's API URL must be http(s), got {api_url!r}")
        self.api_url = api_url if api_url.endswith("/") else api_url + "/"
        path = tuple(email_key.split(".")) if email_key else ()
        if email_key is not None and not all(path):
            raise NotifyRefused(f"an auth state key is dotted names, got {email_key!r}")
        self.email_key = path
        self._token = token
        self._own = client is None
        self._client = client or http_client()
        self.ttl = ttl
        self.timeout = timeout
        self._clock = clock
        self._cache: OrderedDict[str, tuple[float, HubUser | None]] = OrderedDict()

    def __repr__(self) -> str:
        return f"HubDirectory({self.api_url!r}, email_key={'.'.join(self.email_key)!r})"

    async def user(self, name: str) -> HubUser | None:
        """The hub's user ``name`` (None: the hub knows no such user);
        :class:`~hitl_nb.errors.DeliveryFailed` when the hub cannot say."""
        now = self._clock()
        cached = self._cache.get(name)
        if cached is not None and cached[0] > now:
            self._cache.move_to_end(name)
            return cached[1]
        found = await self._ask(name)
        self._cache[name] = (now + self.ttl, found)
        self._cache.move_to_end(name)
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return found

    async def _ask(self, name: str) -> HubUser | None:
        url = f"{self.api_url}users/{quote(name, safe='')}"
        headers = {"Authorization": f"token {self._token}", "Accept": "application/json"}
        try:
            r = await self._client.get(url, headers=headers, timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise DeliveryFailed(
                f"the hub could not be asked who {name!r} is ({type(exc).__name__})"
            ) from None
        if r.status_code == 404:
            return None
        if r.status_code == 403:
            raise DeliveryFailed(
                f"the hub refused to say who {name!r} is (403): the service needs the scope "
                "read:users:name (and admin:auth_state for addresses kept in auth state)"
            )
        if r.status_code != 200:
            raise DeliveryFailed(f"the hub answered {r.status_code} when asked who {name!r} is")
        try:
            model = r.json()
        except ValueError:
            raise DeliveryFailed("the hub's answer about a user is not JSON") from None
        email = None
        if self.email_key:
            state = model.get("auth_state") if isinstance(model, dict) else None
            found = _dig(state, self.email_key)
            if isinstance(found, str):
                try:
                    email = check_address(found.strip())
                except NotifyRefused:
                    email = None
        return HubUser(name=name, email=email)

    async def aclose(self) -> None:
        """Close the client, if this directory made it."""
        if self._own:
            await self._client.aclose()
