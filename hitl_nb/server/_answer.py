"""The answer page on a Jupyter server: ``{base_url}hitl/answer/``, behind its login.

- ``{page}``: the prompts the logged-in person may answer; ``{page}prompt/<reg>/<id>``:
  one prompt. Both are the gateway's HTML shell (:func:`hitl_nb.gateway.shell`): the
  page's script reads the gateway's API (``{base_url}hitl/api/``) with the server's own
  login and XSRF token, no kernel and no JupyterLab;
- ``{page}confirm/<reg>/<id>?choice=<n>``: a one-click link's confirm page
  (:class:`hitl_nb.gateway.ConfirmDesk`): the GET shows it and never answers, the POST
  answers as the logged-in user once its XSRF token is checked. That check is made on
  every POST here, token-authenticated or not (a confirm page is a browser's form);
  a missing or wrong token is a 403 page and nothing reaches the gateway;
- ``{page}static/<file>``: the page's script and stylesheet (no login: nobody's data).

Who is asking is the server's IdentityProvider's user (:func:`caller_of`), allowed by
its Authorizer on the ``hitl`` resource, as for the gateway's API. A browser that is
not logged in is sent to the server's login page and back.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from jupyter_server.auth.decorator import allow_unauthenticated, authorized
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web

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
from hitl_nb.server._handlers import caller_of
from hitl_nb.server._hosted import AUTH_RESOURCE

__all__ = ["ANSWER_PATH", "answer_handlers"]

#: Where the answer page lives, relative to the server's base URL.
ANSWER_PATH = "hitl/answer/"


class _PageHandler(JupyterHandler):
    """A page of the answer page's routes: HTML, the page's headers, errors as pages."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, desk: ConfirmDesk, api: str, lab: str) -> None:
        """Tornado hook: the confirm desk (its ``page`` path), the API's and Lab's paths."""
        self.desk = desk
        self.api = api
        self.lab = lab

    def _send(self, reply: PageReply) -> None:
        send_page(self, reply)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Errors as the page's own plain pages (not Jupyter's template)."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        self._send(self.desk.error_page(status_code, exc, self._reason))

    def lab_link(self, reg_id: str | None = None, prompt_id: str | None = None) -> str:
        """Where the same opens in JupyterLab on this server."""
        if reg_id is None or prompt_id is None:
            return f"{self.lab}?{URL_INBOX}=1"
        query = urlencode(
            {URL_REGISTRATION: reg_id, URL_PROMPT: prompt_id}, quote_via=quote, safe=""
        )
        return f"{self.lab}?{query}"


class AnswerShell(_PageHandler):
    """``GET {page}`` and ``GET {page}prompt/<reg>/<id>``: the page's HTML shell."""

    @web.authenticated
    @authorized
    async def get(self, reg_id: str | None = None, prompt_id: str | None = None) -> None:
        """The shell, for the logged-in user."""
        prompt = (reg_id, prompt_id) if reg_id is not None and prompt_id is not None else None
        config = PageConfig(
            api=self.api,
            page=self.desk.page,
            xsrf=self.xsrf_token.decode("ascii"),
            me=caller_of(self),
            prompt=prompt,
            lab=self.lab_link(reg_id, prompt_id),
        )
        self._send(PageReply(200, shell(config)))


class AnswerConfirm(_PageHandler):
    """``{page}confirm/<reg>/<id>?choice=<n>``: the one-click confirm page and its POST."""

    def check_xsrf_cookie(self) -> None:
        """Checked in :meth:`post` itself, for every POST (see the module docstring)."""

    @web.authenticated
    @authorized
    async def get(self, reg_id: str, prompt_id: str) -> None:
        """The confirm page; never answers."""
        choice = self.get_query_argument("choice", None)
        xsrf = self.xsrf_token.decode("ascii")
        self._send(await self.desk.ask(caller_of(self), reg_id, prompt_id, choice, xsrf))

    @allow_unauthenticated
    async def post(self, reg_id: str, prompt_id: str) -> None:
        """The answer, once the login and the XSRF token are checked (a page that says
        so when either is missing, never a redirect: a POST cannot follow one)."""
        if self.current_user is None:
            self._send(self.desk.login_needed())
            return
        await self._confirm(reg_id, prompt_id)

    @authorized
    async def _confirm(self, reg_id: str, prompt_id: str) -> None:
        try:
            web.RequestHandler.check_xsrf_cookie(self)
        except web.HTTPError:
            self._send(self.desk.xsrf_refused())
            return
        choice = self.get_query_argument("choice", None)
        self._send(await self.desk.confirm(caller_of(self), reg_id, prompt_id, choice))


def answer_handlers(base_url: str, desk: ConfirmDesk) -> list[tuple[str, type, dict[str, Any]]]:
    """The answer page's routes under ``desk.page`` (``{base_url}hitl/answer/``)."""
    routes = page_routes(desk.page)
    kw = {
        "desk": desk,
        "api": url_path_join(base_url, "hitl/api/"),
        "lab": url_path_join(base_url, "lab"),
    }
    return [
        (routes["list"], AnswerShell, kw),
        (routes["prompt"], AnswerShell, kw),
        (routes["confirm"], AnswerConfirm, kw),
        (routes["static"], StaticFiles, {}),
    ]
