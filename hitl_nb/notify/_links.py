"""Where a notification sends its reader: the one place these links are built.

Every message carries one link, to the place where the person answers (or, for an
outcome or a digest, looks). It is built here from the host's public address and the
prompt's ids, nothing else: never the answer, never the prompt's payload, never a
token.

- On a hub: ``{hub}/hub/user-redirect/lab?hitl-registration=R&hitl-prompt=P``. The
  hub's ``user-redirect`` logs the reader in when they are not, starts their server
  when it is not running, and sends them on to ``/user/<their name>/lab?...``: one
  link serves whoever opens it, and names nobody.
- On a single Jupyter server: its own address, ``{server}/lab?...``.
- To the answer page instead, when the host serves one and the administrator did not
  choose the Lab (``notify_answer_links``): ``page`` is its address,
  ``{hub}/services/hitl/answer/`` or ``{server}/hitl/answer/``; a prompt is
  ``{page}prompt/<registration>/<prompt_id>``, the list ``{page}``, and each choice of a
  one-choice prompt ``{page}confirm/<registration>/<prompt_id>?choice=<n>`` (its index:
  the value is read from the stored schema when the person confirms). No Jupyter server
  is started on a hub: the service serves the page itself.

The query is what JupyterLab's prompts panel opens from: ``hitl-prompt`` (and its
``hitl-registration``) opens that prompt's card, ``hitl-inbox`` (a digest's link) the
panel's list. Its URL form is the panel's to define (docs/lab.md); :data:`LAB_PATH`,
:meth:`AnswerLinks.prompt` and :meth:`AnswerLinks.inbox` are the one place to follow it
(the parameters' names are the contract's, :mod:`hitl_nb._lab_contract`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlencode, urlsplit

from hitl_nb._lab_contract import URL_INBOX, URL_PROMPT, URL_REGISTRATION
from hitl_nb.errors import NotifyRefused

__all__ = ["LAB_PATH", "AnswerLinks"]

#: The page a link opens, under the reader's server.
LAB_PATH = "lab"


@dataclass(frozen=True)
class AnswerLinks:
    """The links of one host. ``base_url``: the hub's public address (its root, where
    ``hub/`` is) or the Jupyter server's (its base URL), ending in ``/``; ``hub``: go
    through the hub's ``user-redirect``; ``page``: the answer page's address (ending in
    ``/``), None for links to JupyterLab."""

    base_url: str
    hub: bool
    page: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise NotifyRefused(
                f"the public address for links must be an absolute http(s) URL, "
                f"got {self.base_url!r}"
            )
        if parts.username or parts.password or parts.query or parts.fragment:
            raise NotifyRefused(
                "the public address for links must carry no user name, password, query "
                "or fragment (a link must never hold a credential)"
            )
        if not self.base_url.endswith("/"):
            object.__setattr__(self, "base_url", self.base_url + "/")
        if self.page is not None:
            page = urlsplit(self.page)
            if page.scheme not in ("http", "https") or not page.hostname or page.query:
                raise NotifyRefused(
                    f"the answer page's address must be an absolute http(s) URL without a "
                    f"query, got {self.page!r}"
                )
            if not self.page.endswith("/"):
                object.__setattr__(self, "page", self.page + "/")

    def _page(self) -> str:
        if self.hub:
            return f"{self.base_url}hub/user-redirect/{LAB_PATH}"
        return f"{self.base_url}{LAB_PATH}"

    def prompt(self, reg_id: str, prompt_id: str) -> str:
        """Where to answer one prompt (the gateway's registration and prompt ids)."""
        if self.page is not None:
            return f"{self.page}prompt/{_ids(reg_id, prompt_id)}"
        query = urlencode(
            {URL_REGISTRATION: reg_id, URL_PROMPT: prompt_id}, quote_via=quote, safe=""
        )
        return f"{self._page()}?{query}"

    def inbox(self) -> str:
        """Where the reader's open prompts are listed (a digest's link)."""
        if self.page is not None:
            return self.page
        return f"{self._page()}?{URL_INBOX}=1"

    def choice(self, reg_id: str, prompt_id: str, index: int) -> str | None:
        """The confirm page of one choice of a one-choice prompt (None: links go to
        JupyterLab, which has no such page)."""
        if self.page is None:
            return None
        return f"{self.page}confirm/{_ids(reg_id, prompt_id)}?choice={index}"


def _ids(reg_id: str, prompt_id: str) -> str:
    return f"{quote(reg_id, safe='')}/{quote(prompt_id, safe='')}"
