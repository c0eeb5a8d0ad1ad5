"""The answer page's HTML shell and static files, the same on both hosts.

Both hosts serve, behind their login, ``{page}`` (the prompts a person may answer) and
``{page}prompt/<registration>/<prompt_id>`` (one prompt), where ``{page}`` is
``{base_url}hitl/answer/`` on a Jupyter server and ``{prefix}answer/`` on the hub service
(``/services/hitl/answer/``). What they send is :func:`shell`: a ``<div
id="hitl-answer">`` the page's script draws into, the script and the stylesheet from
``{page}static/`` (each with a version query, so they are cached for long and a new
build is fetched at once), and the page's settings as JSON in a ``<script
type="application/json">`` (:class:`PageConfig`): where the gateway's API is, the XSRF
token its POSTs carry, who is logged in, which prompt (None: the list), and where the
same prompt opens in JupyterLab. The script talks to the gateway's REST API and its
feed, as JupyterLab's panel does; S-3 stays the gateway's.

Nothing in the shell runs inline: the page is served with :data:`CSP` (scripts and
styles from the host itself only) and ``Cache-Control: no-store`` (:data:`PAGE_HEADERS`):
it holds a person's XSRF token. The config's JSON has ``<``, ``>``, ``&``, U+2028 and
U+2029 written as ``\\u`` escapes, so no value (a prompt id, a display name) can close
the script element or start markup. Without JavaScript the page says so, and links to
JupyterLab when there is a link to give.

The static files are the page's build (``jlpm build:page`` writes them into
:data:`STATIC_DIR`, shipped in the wheel); :class:`StaticFiles` serves them, and says
plainly when the build is missing. They hold no one's data and are served without a
login, as Jupyter serves its own static files.

:func:`document` is the frame of the server-rendered pages (the confirm pages of
:mod:`._confirm`): plain HTML with the same stylesheet when it is there, readable
without it, no script.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tornado.web

from hitl_nb.gateway._views import Caller

__all__ = [
    "CSP",
    "PAGE_HEADERS",
    "STATIC_DIR",
    "PageConfig",
    "StaticFiles",
    "document",
    "page_routes",
    "script_json",
    "shell",
    "static_url",
]

#: Where the page's build lands (``answer.js``, ``answer.css``): ``hitl_nb/gateway/static``.
STATIC_DIR = Path(__file__).with_name("static")
#: The page's script and stylesheet, under ``{page}static/``.
SCRIPT = "answer.js"
STYLESHEET = "answer.css"

#: The answer page's Content-Security-Policy: everything from the host itself, nothing
#: inline (the config is data: ``type="application/json"`` never runs), no framing by
#: other sites, forms posted only to the host.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'self'"
)
#: The headers of every page the routes render (the shell, the confirm pages).
PAGE_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": CSP,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
#: How long a static file with its version query is cached (a year: the query changes).
LONG_CACHE = 365 * 86400

#: One path segment of a page's URL: a registration or prompt id (as the API's routes).
SEGMENT = r"([A-Za-z0-9_.:-]{1,256})"

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element: ASCII only (so
    U+2028 and U+2029 are escaped too), ``<``, ``>`` and ``&`` as ``\\u`` escapes."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return re.sub(r"[<>&]", lambda m: _JSON_ESCAPES[m.group(0)], text)


@dataclass(frozen=True)
class PageConfig:
    """What the page's script is told (the ``hitl-page-config`` element's JSON).

    ``api``: the gateway's API base path, ending in ``/``; ``page``: the page's own
    (``{page}``); ``xsrf``: the token POSTs send as ``X-XSRFToken``; ``me``: who is
    logged in; ``prompt``: ``(registration, prompt_id)`` of one prompt, None for the
    list; ``lab``: where the same opens in JupyterLab (None: no link)."""

    api: str
    page: str
    xsrf: str
    me: Caller
    prompt: tuple[str, str] | None = None
    lab: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The config as the script reads it."""
        prompt = None
        if self.prompt is not None:
            prompt = {"registration": self.prompt[0], "prompt_id": self.prompt[1]}
        return {
            "api": self.api,
            "page": self.page,
            "xsrf": self.xsrf,
            "me": {"name": self.me.name, "display": self.me.display},
            "prompt": prompt,
            "lab": self.lab,
        }


_versions: dict[str, tuple[float, int, str]] = {}


def _version(name: str) -> str:
    """A short hash of the static file's content (``"none"`` when it is not built),
    read again when the file changes."""
    path = STATIC_DIR / name
    try:
        stat = path.stat()
    except OSError:
        return "none"
    known = _versions.get(name)
    if known is not None and known[:2] == (stat.st_mtime, stat.st_size):
        return known[2]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    _versions[name] = (stat.st_mtime, stat.st_size, digest)
    return digest


def static_url(page: str, name: str) -> str:
    """The URL of a static file under ``page``, with its version query."""
    return f"{page}static/{name}?v={_version(name)}"


def _stylesheet(page: str) -> str:
    href = html.escape(static_url(page, STYLESHEET), quote=True)
    return f'<link rel="stylesheet" href="{href}">'


def shell(config: PageConfig) -> str:
    """The answer page's HTML for ``config`` (the same on both hosts)."""
    page = config.page
    title = "Answer a prompt" if config.prompt is not None else "Prompts to answer"
    script = html.escape(static_url(page, SCRIPT), quote=True)
    if config.lab:
        lab = html.escape(config.lab, quote=True)
        fallback = f' You can also <a href="{lab}">answer it in JupyterLab</a>.'
    else:
        fallback = ""
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f"<title>{title}</title>\n"
        f"{_stylesheet(page)}\n"
        f'<script src="{script}" defer></script>\n'
        "</head><body>\n"
        '<div id="hitl-answer">\n'
        f"<noscript><h1>{title}</h1>\n"
        "<p>This page needs JavaScript to show the prompts and their forms: turn it on "
        f"for this site and load the page again.{fallback}</p></noscript>\n"
        "</div>\n"
        '<script id="hitl-page-config" type="application/json">'
        f"{script_json(config.to_json())}</script>\n"
        "</body></html>\n"
    )


def document(page: str, title: str, body: str) -> str:
    """A server-rendered page: ``title`` (text, escaped here) and ``body`` (HTML made by
    the caller, every outside word escaped), with the page's stylesheet; no script."""
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"{_stylesheet(page)}\n"
        "</head><body>\n"
        f'<main class="hitl-page-doc">\n{body}\n</main>\n'
        "</body></html>\n"
    )


def page_routes(page: str) -> dict[str, str]:
    """The answer page's URL patterns under ``page`` (a path ending in ``/``), by name:
    ``list`` (with or without its last ``/``), ``prompt`` and ``confirm`` (each with
    its registration and prompt id), ``static`` (a file name)."""
    root = re.escape(page)
    return {
        "list": re.escape(page.rstrip("/")) + "/?",
        "prompt": f"{root}prompt/{SEGMENT}/{SEGMENT}",
        "confirm": f"{root}confirm/{SEGMENT}/{SEGMENT}",
        "static": f"{root}static/(.*)",
    }


_STATIC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class StaticFiles(tornado.web.StaticFileHandler):
    """``{page}static/<file>``: the page's build from :data:`STATIC_DIR` (no login: the
    files hold nobody's data). With the version query the page gives (``?v=``), cached
    for a year; without it, checked each time. A file that is not there is a 404 that
    says why (the build was not made), in plain text."""

    def initialize(self, path: str = str(STATIC_DIR), default_filename: str | None = None) -> None:
        """Tornado hook: serve from :data:`STATIC_DIR` (``path``: tests may give another)."""
        super().initialize(path=path, default_filename=default_filename)

    def set_extra_headers(self, path: str) -> None:
        """``nosniff`` on every file."""
        self.set_header("X-Content-Type-Options", "nosniff")

    def get_cache_time(self, path: str, modified: Any, mime_type: str) -> int:
        """A year with the version query, else 0 (the browser checks each time)."""
        return LONG_CACHE if "v" in self.request.arguments else 0

    async def get(self, path: str, include_body: bool = True) -> None:
        """The file, or a 404 that says why."""
        if not _STATIC_NAME.fullmatch(path) or ".." in path:
            self._missing(f"no such file of the answer page: {path!r}")
            return
        if not (Path(self.root) / path).is_file():
            self._missing(
                f"the answer page's {path} is not built: run 'jlpm build:page' (or "
                "'jlpm build') in the hitl-nb source, or install a hitl-nb wheel, "
                "which carries it"
            )
            return
        await super().get(path, include_body)

    def _missing(self, message: str) -> None:
        self.set_status(404)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(message + "\n")
