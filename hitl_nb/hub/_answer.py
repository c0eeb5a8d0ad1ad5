"""The answer page on the hub service: ``{prefix}answer/``, behind the hub's login.

The service serves it itself: nobody's Jupyter server is started, no kernel, no
JupyterLab. A person opens an email's link, is sent through the hub's OAuth login when
the service does not know them yet (and comes back to the page they asked for), and
answers with the service's cookie and its XSRF token.

- ``{prefix}answer/`` and ``{prefix}answer/prompt/<reg>/<id>``: the gateway's HTML shell
  (:func:`hitl_nb.gateway.shell`), its script reading ``{prefix}api/``;
- ``{prefix}answer/confirm/<reg>/<id>?choice=<n>``: a one-click link's confirm page
  (:class:`hitl_nb.gateway.ConfirmDesk`): the GET never answers; the POST answers once
  its ``_xsrf`` field matches the service's token for this browser, checked on every
  POST before the hub is asked who it is (a missing or wrong token: a 403 page, nothing
  reaches the gateway);
- ``{prefix}answer/static/<file>``: the page's script and stylesheet (no login).
"""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import quote, urlencode

import tornado.web
from jupyterhub.services.auth import HubOAuth, HubOAuthenticated

from hitl_nb._lab_contract import URL_INBOX, URL_PROMPT, URL_REGISTRATION
from hitl_nb.gateway import (
    ConfirmDesk,
    PageConfig,
    PageReply,
    StaticFiles,
    page_routes,
    send_page,
    shell,
)
from hitl_nb.hub._auth import NotVouched, caller_of, hub_user

__all__ = ["ANSWER_PATH", "answer_handlers"]

#: Where the answer page lives, under the service's prefix.
ANSWER_PATH = "answer/"


def _text(token: str | bytes) -> str:
    return token.decode("ascii") if isinstance(token, bytes) else token


class _HubPage(HubOAuthenticated, tornado.web.RequestHandler):  # type: ignore[misc]
    """A page of the answer page's routes on the hub: HTML, the page's headers, the
    hub's login."""

    def initialize(self, desk: ConfirmDesk, hub_auth: HubOAuth, api: str) -> None:
        """Tornado hook: the confirm desk (its ``page``), the service's HubOAuth, the API."""
        self.desk = desk
        self.hub_auth = hub_auth
        self.api = api

    def _send(self, reply: PageReply) -> None:
        send_page(self, reply)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Errors as the page's own plain pages."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        self._send(self.desk.error_page(status_code, exc, self._reason))

    async def _person(self) -> dict[str, Any] | None:
        """The hub's user for a page view; None when this request was answered already
        (sent to the hub's login, or refused)."""
        try:
            return await hub_user(self)
        except NotVouched as exc:
            if exc.status == 401:
                self.redirect(self.get_login_url())  # back to this very page after
            else:
                self._send(self.desk.message(403, "You may not use this page", exc.message))
            return None

    def lab_link(self, reg_id: str | None = None, prompt_id: str | None = None) -> str:
        """The same in the person's own JupyterLab (through the hub's ``user-redirect``,
        which starts their server: a link they choose, never the default)."""
        lab = f"{self.hub_auth.hub_prefix}user-redirect/lab"
        if reg_id is None or prompt_id is None:
            return f"{lab}?{URL_INBOX}=1"
        query = urlencode(
            {URL_REGISTRATION: reg_id, URL_PROMPT: prompt_id}, quote_via=quote, safe=""
        )
        return f"{lab}?{query}"


class HubAnswerShell(_HubPage):
    """``GET {prefix}answer/`` and ``GET {prefix}answer/prompt/<reg>/<id>``: the shell."""

    async def get(self, reg_id: str | None = None, prompt_id: str | None = None) -> None:
        """The shell, or the hub's login first."""
        model = await self._person()
        if model is None:
            return
        prompt = (reg_id, prompt_id) if reg_id is not None and prompt_id is not None else None
        config = PageConfig(
            api=self.api,
            page=self.desk.page,
            xsrf=_text(self.xsrf_token),
            me=caller_of(model),
            prompt=prompt,
            lab=self.lab_link(reg_id, prompt_id),
        )
        self._send(PageReply(200, shell(config)))


class HubAnswerConfirm(_HubPage):
    """``{prefix}answer/confirm/<reg>/<id>?choice=<n>``: the confirm page and its POST."""

    async def get(self, reg_id: str, prompt_id: str) -> None:
        """The confirm page (after the hub's login); never answers."""
        model = await self._person()
        if model is None:
            return
        choice = self.get_query_argument("choice", None)
        xsrf = _text(self.xsrf_token)
        self._send(await self.desk.ask(caller_of(model), reg_id, prompt_id, choice, xsrf))

    async def post(self, reg_id: str, prompt_id: str) -> None:
        """The answer: the XSRF field first, then who the hub says is asking."""
        sent = self.get_body_argument("_xsrf", None) or ""
        if not sent or not hmac.compare_digest(sent.encode(), _bytes(self.xsrf_token)):
            self._send(self.desk.xsrf_refused())
            return
        try:
            model = await hub_user(self)
        except NotVouched as exc:
            if exc.status == 401:
                self._send(self.desk.login_needed())
            else:
                self._send(self.desk.message(403, "You may not use this page", exc.message))
            return
        choice = self.get_query_argument("choice", None)
        self._send(await self.desk.confirm(caller_of(model), reg_id, prompt_id, choice))


def _bytes(token: str | bytes) -> bytes:
    return token if isinstance(token, bytes) else token.encode("ascii")


def answer_handlers(
    prefix: str, desk: ConfirmDesk, hub_auth: HubOAuth
) -> list[tuple[str, type, dict[str, Any]]]:
    """The answer page's routes under ``desk.page`` (``{prefix}answer/``)."""
    routes = page_routes(desk.page)
    kw = {"desk": desk, "hub_auth": hub_auth, "api": prefix + "api/"}
    return [
        (routes["list"], HubAnswerShell, kw),
        (routes["prompt"], HubAnswerShell, kw),
        (routes["confirm"], HubAnswerConfirm, kw),
        (routes["static"], StaticFiles, {}),
    ]
