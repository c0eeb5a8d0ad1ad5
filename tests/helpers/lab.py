"""A real Jupyter front end for browser tests: JupyterLab or Notebook 7, as root, with
Chromium driven by Playwright, and a way to run code in the notebook's kernel.

Used by the browser tests and by ``docs/img/take_screenshots.py``. Servers listen on
127.0.0.1 with a free port and a token; everything started here is stopped on exit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import nbformat

from tests.helpers.ports import free_port
from tests.helpers.until import until

TOKEN = "hitl-nb-browser-test"
ROOT = Path(__file__).resolve().parent.parent.parent

CHROMIUM = next(
    (
        p
        for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "")
        if p and Path(p).exists()
    ),
    None,
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: JavaScript: run ``code`` in the page's notebook kernel, resolve with its stdout (and
#: the text of an error, if any).
KERNEL_EVAL = """
async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({code, store_history: false});
  let out = '';
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type;
    if (t === 'stream') out += msg.content.text;
    if (t === 'error') out += 'ERROR ' + msg.content.ename + ': ' + msg.content.evalue;
  };
  await future.done;
  return out;
}
"""


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of code cells (Python 3 kernel)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(src.strip()) for src in cells]
    nbformat.write(nb, path)


@contextmanager
def jupyter_server(
    root: Path,
    app: str = "jupyterlab",
    *extra: str,
    unset: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    ready_token: str = TOKEN,
    python: str = sys.executable,
) -> Iterator[str]:
    """Run JupyterLab (``app="jupyterlab"``) or Notebook 7 (``"notebook"``) on ``root``
    (``extra``: more command-line options; ``unset``: environment variables the server
    and its kernels must not see; ``env``: more of them; ``ready_token``: the token that
    asks whether it is up, for a server with another IdentityProvider); yields its base
    URL. Settings files written under ``root / ".settings"`` beforehand are kept; the
    hitl-nb extension keeps its state under ``root / ".hitl"`` unless ``extra`` says.
    ``python``: the interpreter that runs it (another environment's)."""
    settings = root / ".settings"
    news = settings / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True, exist_ok=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port = free_port()
    environ = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(root / ".config"),
        "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
        "PYTHONPATH": str(ROOT),
    }
    for name in unset:
        environ.pop(name, None)
    environ.update(env or {})
    cls = "LabApp" if app == "jupyterlab" else "JupyterNotebookApp"
    command = [
        python,
        "-m",
        app,
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={TOKEN}",
        # A kernel whose port another process took between jupyter_client choosing it
        # and the kernel binding it is restarted on new ports; with cached ports (the
        # default) every restart reuses the taken ones and the kernel dies.
        "--KernelManager.cache_ports=False",
        f"--{cls}.expose_app_in_browser=True",
        f"--{cls}.user_settings_dir={settings}",
        f"--{cls}.workspaces_dir={root / '.workspaces'}",
        *extra,
    ]
    if not any(option.startswith("--HitlServer.state_dir=") for option in extra):
        # The gateway's SQLite files stay in the test's folder, not the user's data dir.
        command.append(f"--HitlServer.state_dir={root / '.hitl'}")
    log_path = root / f"{app}.log"
    log = log_path.open("w")
    server = subprocess.Popen(command, env=environ, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        assert server.poll() is None, f"{app} exited:\n" + log_path.read_text()
        status = httpx.get(
            f"{base}/api/status", headers={"Authorization": f"token {ready_token}"}, timeout=2
        )
        return status.status_code == 200

    try:
        until(
            ready,
            timeout=90,
            what=f"{app} to answer",
            interval=0.3,
            ignore=httpx.TransportError,
            detail=log_path.read_text,
        )
        yield base
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@contextmanager
def playwright() -> Iterator[Any]:
    """Playwright's sync API (one per thread: share it between browsers)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


def _launch_options() -> dict[str, Any]:
    assert CHROMIUM is not None, "no system Chromium"
    return {"executable_path": CHROMIUM, "headless": True, "args": CHROMIUM_ARGS}


@contextmanager
def browser(pw: Any, profile: Path, width: int = 1280, height: int = 1000) -> Iterator[Any]:
    """A Chromium browser context (headless, the system Chromium, a fresh profile)."""
    context = pw.chromium.launch_persistent_context(
        str(profile), viewport={"width": width, "height": height}, **_launch_options()
    )
    try:
        yield context
    finally:
        context.close()


class Chromium:
    """Browser contexts on one headless system Chromium: ``with chromium(width, height)
    as context`` (more keywords go to Playwright's ``new_context``, e.g.
    ``storage_state``). Playwright and Chromium start with the first open context and stop
    with the last, so contexts open at once share them (Playwright's sync API allows one
    per thread) and nothing runs between browser tests: while Playwright runs,
    ``asyncio.run`` refuses to in this thread (it marks its event loop as running between
    calls), so a test awaits its agent's side after its ``with`` block. What the
    ``chromium`` fixture of ``tests/conftest.py`` gives."""

    def __init__(self) -> None:
        self._stack: ExitStack | None = None
        self._browser: Any = None
        self._open = 0

    @contextmanager
    def __call__(self, width: int = 1280, height: int = 1000, **options: Any) -> Iterator[Any]:
        if self._open == 0:
            with ExitStack() as stack:
                pw = stack.enter_context(playwright())
                self._browser = pw.chromium.launch(**_launch_options())
                stack.callback(self._browser.close)
                self._stack = stack.pop_all()
        self._open += 1
        try:
            context = self._browser.new_context(
                viewport={"width": width, "height": height}, **options
            )
            try:
                yield context
            finally:
                context.close()
        finally:
            self._open -= 1
            if self._open == 0 and self._stack is not None:
                self._stack, stack = None, self._stack
                self._browser = None
                stack.close()


def open_notebook(context: Any, base: str, name: str, app: str = "jupyterlab") -> Any:
    """Open notebook ``name``, wait for an idle kernel; returns the page."""
    page = context.new_page()
    path = "lab/tree" if app == "jupyterlab" else "notebooks"
    page.goto(f"{base}/{path}/{name}?token={TOKEN}")
    page.wait_for_function(
        "() => { const w = window.jupyterapp?.shell?.currentWidget;"
        " return w?.sessionContext?.session?.kernel?.status === 'idle'; }",
        timeout=120_000,
    )
    return page


def run_all(page: Any) -> None:
    """Run every cell of the open notebook."""
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")


def kernel(page: Any, code: str) -> str:
    """Run ``code`` in the open notebook's kernel; its stdout."""
    out: str = page.evaluate(KERNEL_EVAL, code)
    if out.startswith("ERROR") or "\nERROR " in out:
        raise AssertionError(f"kernel code failed: {out}")
    return out


def set_theme(page: Any, dark: bool) -> None:
    """Switch JupyterLab's (or Notebook 7's) theme and wait until it applies."""
    theme = "JupyterLab Dark" if dark else "JupyterLab Light"
    page.evaluate(
        "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme
    )
    page.wait_for_function(
        "(d) => document.body.dataset.jpThemeLight === (d ? 'false' : 'true')",
        arg=dark,
        timeout=30_000,
    )
    page.wait_for_timeout(400)  # the theme's stylesheet settles


#: JavaScript: measure one form (an element with the class ``hitl-form``) as a person
#: sees it. Returns left edges of visible inputs by nesting level, elements that stick
#: out of the form, controls that are clipped or squeezed, the contrast of every
#: visible error message against what is behind it, the summary's entries, the drawn
#: contrast and font style of every input's value and placeholder (``values``), the
#: left edges of help notes and their inputs (``notes``) and the remove buttons' sizes.
MEASURE_FORM = (Path(__file__).parent / "measure_form.js").read_text()


def measure_form(page: Any, selector: str = ".hitl-form", nth: int = 0) -> dict[str, Any]:
    """:data:`MEASURE_FORM` on the ``nth`` element matching ``selector``."""
    handle = page.locator(selector).nth(nth).element_handle()
    result: dict[str, Any] = page.evaluate(MEASURE_FORM, handle)
    return result


def edge_spread(measured: dict[str, Any]) -> dict[str, float]:
    """Per nesting level, how far apart the inputs' left edges are (px)."""
    out = {}
    for level, items in measured["edges"].items():
        lefts = [i["left"] for i in items]
        out[level] = max(lefts) - min(lefts)
    return out


#: JavaScript: measure one conversation (or a card shown alone) as a person sees it: the
#: left edges of every input it asks for (the form's top-level inputs, "Answering as",
#: the override box) and of the responder's notes, the number of frames (elements with a
#: visible border) and every element drawn outside all of them.
MEASURE_CARD = (Path(__file__).parent / "measure_card.js").read_text()


def measure_card(page: Any, locator: Any) -> dict[str, Any]:
    """:data:`MEASURE_CARD` on the element ``locator`` finds."""
    result: dict[str, Any] = page.evaluate(MEASURE_CARD, locator.element_handle())
    return result
