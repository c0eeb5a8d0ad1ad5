"""The ~840-property form in JupyterLab: from running the cell to the last widget shown.

Run by hand:  python benchmarks/bench_forms_browser.py [--rounds N] [--mode M]

Starts JupyterLab with a notebook whose cell builds the same ~64 KiB, 840-property
schema (``bench_forms.big_schema``) with hitl_nb.forms and with ipywidgets-jsonschema
1.2.1 (a benchmark-only dependency; without it its column says so), and drives
Chromium with Playwright.

One measurement runs in a fresh Chromium on a fresh kernel, so neither generator's
thousands of widget models weigh on the other's next round: open the notebook, run
its setup cell, render the same generator's form of 60 properties once (the page's
JavaScript is then compiled, as after a few widgets in a session), clear it, then
execute the timed cell and wait until its output holds the rendered form and the page
has not changed for 300 ms. The time is from the execute request to the last DOM change
of that output (the quiet window is not counted). For hitl_nb the last field
(``.hitl-field-field_5f0839``) must also be visible. Every timed cell builds a schema
seen for the first time (its title differs), so each pays the schema's compile. Round 0
is not counted; within a round the two generators alternate which goes first.

Two modes, each with its own notebook, in one run (``--mode both``):

- ``user``: the page a user would have. Playwright launches Chromium and drives the page
  through a DevTools session that only evaluates JavaScript (see :class:`QuietPage`).
- ``playwright``: Playwright's own page. Playwright copies every WebSocket frame to its
  driver, so each widget model's comm message costs more than in a user's browser.

Target (issue 12): at most 1.5 s, and at least 4x faster than ipywidgets-jsonschema.
The server runs with IOPub rate limits lifted: at the default limit a form of thousands
of widget models loses comm messages ("model not found").
The machine is shared: compare the two columns of the same run, not runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402
from tests.helpers import lab  # noqa: E402

SIZE = 840

SETUP = """
import importlib.util, sys, warnings
sys.path.insert(0, {bench!r})
sys.path.extend({peer_paths!r})  # where this script found ipywidgets-jsonschema
from bench_forms import big_schema
from hitl_nb.forms import Form
schema, _payload = big_schema({size})
small, _payload = big_schema({warm_size})  # warms the page up (see _measure)
Form({{"type": "object"}})  # imports and shared Layout/Style objects, as after any form
HAVE_IWJ = importlib.util.find_spec("ipywidgets_jsonschema") is not None
import ipywidgets as W
if HAVE_IWJ:
    import ipywidgets_jsonschema as iwj
    warnings.simplefilter("ignore")
print("set up:", 6 * 7)
"""

WARM_SIZE = 60

#: name, cell (``{schema}``: the setup cell's ``schema`` or ``small``), and what shows
#: the form is drawn (``{last}``: the number of its last property)
OURS = ("hitl_nb", 'Form({{**{schema}, "title": "round {n}"}})', ".hitl-field-field_5f{last:04d}")
# what iwj.Form.show() displays, kept referenced (show() drops it: "model not found")
IWJ = (
    "ipywidgets-jsonschema",
    'kept = iwj.Form({{**{schema}, "title": "round {n}"}})\n'
    "W.VBox(kept._form_element.widgets, layout=W.Layout(width='100%'))",
    ".widget-vbox",
)

#: JavaScript: run ``code`` as a new last cell, resolve with the milliseconds from the
#: execute request to the last change of the cell's output (waiting for ``quiet`` ms of
#: no change after the kernel replied and ``selector`` is in the output), or with the
#: output's text when the front end shows an error instead (or nothing within 120 s).
TIME_CELL = """
async ([code, selector, quiet]) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  const nb = panel.content;
  await app.commands.execute('notebook:insert-cell-below');
  const cell = nb.activeCell;
  cell.model.sharedModel.setSource(code);
  const out = cell.node;
  let last = performance.now();
  const obs = new MutationObserver(() => { last = performance.now(); });
  obs.observe(out, {subtree: true, childList: true, attributes: true, characterData: true});
  const t0 = performance.now();
  app.commands.execute('notebook:run-cell');  // not awaited: the loop below times out
  for (;;) {
    await new Promise((r) => setTimeout(r, 50));
    const idle = panel.sessionContext.session.kernel.status === 'idle';
    const found = out.querySelector(selector);
    if (idle && found && found.getBoundingClientRect().height > 0
        && performance.now() - last >= quiet) break;
    const failed = idle && /javascript error|Error displaying widget|Traceback/.test(out.innerText)
        && performance.now() - last >= quiet;
    if (failed || performance.now() - t0 > 120000) {
      obs.disconnect();
      return out.innerText.slice(0, 300);  // what the cell shows instead of a form
    }
  }
  obs.disconnect();
  return last - t0;
}
"""

KERNEL_IDLE = (
    "() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel?.status"
    " === 'idle'"
)
SET_UP = "() => document.body.innerText.includes('set up: 42')"
CLEAR = "() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')"
RUN_ALL = "() => window.jupyterapp.commands.execute('notebook:run-all-cells')"


class QuietPage:
    """A page of a Playwright-launched Chromium that Playwright does not instrument.

    Playwright attaches to every page it opens and turns on the DevTools network
    domain, so each WebSocket frame (each widget model's comm message) is copied to the
    driver and on to the Python client: for a thousand-model form that adds about 45 %
    to the time and is not there in a user's browser. This page lives in a browser
    context Playwright did not create (it leaves such pages alone) and is driven through
    a DevTools session of its own that only evaluates JavaScript.
    """

    def __init__(self, browser: Any, url: str, width: int, height: int) -> None:
        self._cdp = browser.new_browser_cdp_session()
        self._context = self._cdp.send("Target.createBrowserContext")["browserContextId"]
        self._target = self._cdp.send(
            "Target.createTarget",
            {"url": url, "browserContextId": self._context, "width": width, "height": height},
        )["targetId"]
        self._replies: dict[int, dict[str, Any]] = {}
        self._cdp.on("Target.receivedMessageFromTarget", self._receive)
        self._session = self._cdp.send(
            "Target.attachToTarget", {"targetId": self._target, "flatten": False}
        )["sessionId"]
        self._next = 0

    def _receive(self, event: dict[str, Any]) -> None:
        message = json.loads(event["message"])
        if "id" in message:
            self._replies[message["id"]] = message

    def evaluate(self, function: str, arg: Any = None) -> Any:
        """Like Playwright's ``page.evaluate``: call ``function`` with ``arg``, await it."""
        self._next += 1
        ask = {
            "id": self._next,
            "method": "Runtime.evaluate",
            "params": {
                "expression": f"({function})({json.dumps(arg)})",
                "awaitPromise": True,
                "returnByValue": True,
            },
        }
        self._cdp.send(
            "Target.sendMessageToTarget", {"sessionId": self._session, "message": json.dumps(ask)}
        )
        while self._next not in self._replies:
            time.sleep(0.05)
            self._cdp.send("Target.getTargets")  # lets Playwright deliver the reply
        reply = self._replies.pop(self._next)
        if "error" in reply or "exceptionDetails" in reply.get("result", {}):
            raise RuntimeError(f"the page failed: {reply}")
        return reply["result"]["result"].get("value")

    def close(self) -> None:
        """Close the page and its browser context."""
        self._cdp.send("Target.closeTarget", {"targetId": self._target})
        self._cdp.send("Target.disposeBrowserContext", {"browserContextId": self._context})
        self._cdp.detach()

    def wait_for(self, function: str, timeout: float = 120) -> None:
        """Wait until ``function`` returns a true value."""
        deadline = time.monotonic() + timeout
        while not self.evaluate(function):
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {function}")
            time.sleep(0.3)


def _peer_paths() -> list[str]:
    """The folder this interpreter imports ipywidgets-jsonschema from, when it is not on
    the kernel's path (installed with ``pip install --target DIR``, DIR on PYTHONPATH):
    the server gives its kernels a PYTHONPATH of its own."""
    spec = importlib.util.find_spec("ipywidgets_jsonschema")
    if spec is None or spec.origin is None:
        return []
    return [str(Path(spec.origin).resolve().parent.parent)]


class _PlaywrightPage:
    """Playwright's own page in a context of its own (what :class:`QuietPage` is
    compared with)."""

    def __init__(self, browser: Any, url: str, width: int, height: int) -> None:
        self._context = browser.new_context(viewport={"width": width, "height": height})
        self._page = self._context.new_page()
        self._page.goto(url)

    def evaluate(self, function: str, arg: Any = None) -> Any:
        return self._page.evaluate(function, arg)

    def wait_for(self, function: str, timeout: float = 120) -> None:
        try:
            self._page.wait_for_function(function, timeout=timeout * 1000)
        except Exception as exc:
            text = self._page.evaluate("() => document.body.innerText.slice(0, 2000)")
            raise RuntimeError(f"timed out waiting for {function}; the page shows: {text}") from exc

    def close(self) -> None:
        self._context.close()


_MEASUREMENTS = itertools.count()


def _said(text: str) -> str:
    """The end of what a cell shows, on one line."""
    return " ".join(text.split())[-160:]


def _measure(pw: Any, base: str, mode: str, code: str, selector: str, n: int) -> float | str:
    """One measurement of generator ``code`` (see :data:`OURS`) in round ``n``, in a
    fresh browser with a fresh kernel (so neither generator's thousands of models weigh
    on the other's next round): seconds, or what the cell shows instead of a form."""
    auth = {"Authorization": f"token {lab.TOKEN}"}
    for session in httpx.get(f"{base}/api/sessions", headers=auth).json():
        httpx.delete(f"{base}/api/sessions/{session['id']}", headers=auth).raise_for_status()
    # a workspace of its own: JupyterLab would reopen the tabs of the last measurement
    workspace = f"m{next(_MEASUREMENTS)}"
    url = f"{base}/lab/workspaces/{workspace}/tree/{mode}.ipynb?token={lab.TOKEN}"
    browser = pw.chromium.launch(
        executable_path=lab.CHROMIUM, headless=True, args=lab.CHROMIUM_ARGS
    )
    try:
        page = (QuietPage if mode == "user" else _PlaywrightPage)(browser, url, 1280, 1000)
        page.wait_for(KERNEL_IDLE)
        page.evaluate(RUN_ALL)
        page.wait_for(SET_UP)
        # the same generator on 60 properties first, so the page's JavaScript is warm
        # (compiled) for both generators, as after a few widgets in a session
        warm = [code.format(schema="small", n=n), selector.format(last=WARM_SIZE - 1), 300]
        ms = page.evaluate(TIME_CELL, warm)
        if not isinstance(ms, str):
            page.evaluate(CLEAR)
            time.sleep(0.5)
            timed = [code.format(schema="schema", n=n), selector.format(last=SIZE - 1), 300]
            ms = page.evaluate(TIME_CELL, timed)
        page.close()
    finally:
        browser.close()
    return ms / 1000 if not isinstance(ms, str) else _said(ms)


def run(rounds: int, modes: tuple[str, ...] = ("user", "playwright")) -> dict[str, Any]:
    """``rounds`` rounds in each mode: "user" (a page Playwright does not instrument, as
    in a user's browser) and "playwright" (Playwright's own page, every WebSocket frame
    copied to the driver). Round 0 warms up and is not counted; within a round the two
    generators alternate which goes first."""
    have_iwj = importlib.util.find_spec("ipywidgets_jsonschema") is not None
    results = {
        mode: {"times": {"hitl_nb": [], "ipywidgets-jsonschema": []}, "failed": {}}
        for mode in modes
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        setup = SETUP.format(
            bench=str(ROOT / "benchmarks"),
            peer_paths=_peer_paths(),
            size=SIZE,
            warm_size=WARM_SIZE,
        )
        for mode in modes:
            lab.write_notebook(root / f"{mode}.ipynb", [setup])
        with (
            # the server's default IOPub rate limit (1000 messages/s) drops the comm
            # messages of a form with thousands of widget models ("model not found")
            lab.jupyter_server(
                root,
                "jupyterlab",
                "--ServerApp.iopub_msg_rate_limit=1e9",
                "--ServerApp.iopub_data_rate_limit=1e12",
            ) as base,
            lab.playwright() as pw,
        ):
            for n in range(rounds + 1):
                for mode in modes:
                    result = results[mode]
                    order = [OURS, IWJ] if have_iwj else [OURS]
                    for name, code, selector in order[:: -1 if n % 2 else 1]:
                        got = _measure(pw, base, mode, code, selector, n)
                        shown = f"{got:.2f} s" if isinstance(got, float) else got
                        print(f"  round {n}, {mode}, {name}: {shown}", file=sys.stderr)
                        if isinstance(got, str):
                            if name == "hitl_nb":
                                raise RuntimeError(f"no form; the cell says: {got}")
                            if n:
                                result["failed"].setdefault(name, []).append(got)
                        elif n:
                            result["times"][name].append(got)
    return results


def _report(mode: str, result: dict[str, Any], rounds: int) -> None:
    heading = {
        "user": "a page Playwright does not instrument (as in a user's browser)",
        "playwright": "Playwright's own page (every WebSocket frame copied to the driver)",
    }[mode]
    print(f"{SIZE} properties, cell run to last widget shown, median of {rounds}, {heading}:")
    times = result["times"]
    ours = statistics.median(times["hitl_nb"])
    print(f"  hitl_nb.forms          {ours:.2f} s   {[round(t, 2) for t in times['hitl_nb']]}")
    theirs_times = times["ipywidgets-jsonschema"]
    failures = result["failed"].get("ipywidgets-jsonschema", [])
    if failures:
        print(f"  ipywidgets-jsonschema  did not render in {len(failures)} of {rounds} rounds;")
        print("   the cell shows:", failures[-1])
    if theirs_times:
        theirs = statistics.median(theirs_times)
        print(f"  ipywidgets-jsonschema  {theirs:.2f} s   {[round(t, 2) for t in theirs_times]}")
        print(f"  speed-up               {theirs / ours:.1f}x")
    elif not failures:
        print("  ipywidgets-jsonschema is not installed (pip install ipywidgets-jsonschema==1.2.1)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", type=int, default=SIZE, help="properties (default 840)")
    parser.add_argument(
        "--mode",
        choices=("both", "user", "playwright"),
        default="both",
        help="user: a page Playwright does not instrument; playwright: its own page",
    )
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1 (round 0 only warms up)")
    globals()["SIZE"] = args.size
    modes = ("user", "playwright") if args.mode == "both" else (args.mode,)
    for mode, result in run(args.rounds, modes).items():
        _report(mode, result, args.rounds)
    return 0


if __name__ == "__main__":
    end_on_sigterm()
    raise SystemExit(main())
