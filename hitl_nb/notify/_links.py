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
    through the hub's ``user-redirect``."""

    base_url: str
    hub: bool

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

    def _page(self) -> str:
        if self.hub:
            return f"{self.base_url}hub/user-redirect/{LAB_PATH}"
        return f"{self.base_url}{LAB_PATH}"

    def prompt(self, reg_id: str, prompt_id: str) -> str:
        """Where to answer one prompt (the gateway's registration and prompt ids)."""
        query = urlencode(
            {URL_REGISTRATION: reg_id, URL_PROMPT: prompt_id}, quote_via=quote, safe=""
        )
        return f"{self._page()}?{query}"

    def inbox(self) -> str:
        """Where the reader's open prompts are listed (a digest's link)."""
        return f"{self._page()}?{URL_INBOX}=1"
