"""The ~840-property form in JupyterLab: from running the cell to the last widget shown.

Run by hand:  python benchmarks/bench_forms_browser.py [--rounds N]

Starts JupyterLab with a notebook whose cells build the same ~64 KiB, 840-property
schema (``bench_forms.big_schema``) with hitl_nb.forms and with ipywidgets-jsonschema
1.2.1 (a benchmark-only dependency; without it its column says so), and drives
Chromium with Playwright. One measurement: execute the cell, then wait until the cell's
output holds the rendered form and the page has not changed for 300 ms; the time is from
the execute request to the last DOM change of that output (the quiet window is not
counted). For hitl_nb the last field (``.hitl-field-field_5f0839``) must also be visible.
Every round builds a schema seen for the first time (its title differs), so each build
pays the schema's compile; the two generators alternate within a round.

Target (issue 12): at most 1.5 s, and at least 4x faster than ipywidgets-jsonschema.
The server runs with IOPub rate limits lifted: at the default limit a form of thousands
of widget models loses comm messages ("model not found").
The machine is shared: compare the two columns of the same run, not runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers import lab  # noqa: E402

SIZE = 840

SETUP = """
import importlib.util, sys, warnings
sys.path.insert(0, {bench!r})
sys.path.extend({peer_paths!r})  # where this script found ipywidgets-jsonschema
from bench_forms import big_schema
from hitl_nb.forms import Form
schema, _payload = big_schema({size})
Form({{"type": "object"}})  # imports and shared Layout/Style objects, as after any form
HAVE_IWJ = importlib.util.find_spec("ipywidgets_jsonschema") is not None
if HAVE_IWJ:
    import ipywidgets as W
    import ipywidgets_jsonschema as iwj
    warnings.simplefilter("ignore")
print("set up:", 6 * 7)
"""

OURS = 'Form({{**schema, "title": "round {n}"}})'
# what iwj.Form.show() displays, kept referenced (show() drops it: "model not found")
IWJ = (
    'kept = iwj.Form({{**schema, "title": "round {n}"}})\n'
    "W.VBox(kept._form_element.widgets, layout=W.Layout(width='100%'))"
)

#: JavaScript: run ``code`` as a new last cell, resolve with the milliseconds from the
#: execute request to the last change of the cell's output (waiting for ``quiet`` ms of
#: no change after the kernel replied and ``selector`` is in the output).
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
  await app.commands.execute('notebook:run-cell');
  for (;;) {
    await new Promise((r) => setTimeout(r, 50));
    const idle = panel.sessionContext.session.kernel.status === 'idle';
    const found = out.querySelector(selector);
    if (idle && found && found.getBoundingClientRect().height > 0
        && performance.now() - last >= quiet) break;
    if (performance.now() - t0 > 120000) {
      obs.disconnect();
      return out.innerText.slice(0, 300);  // what the cell shows instead of a form
    }
  }
  obs.disconnect();
  return last - t0;
}
"""


def _peer_paths() -> list[str]:
    """The folder this interpreter imports ipywidgets-jsonschema from, when it is not on
    the kernel's path (installed with ``pip install --target DIR``, DIR on PYTHONPATH):
    the server gives its kernels a PYTHONPATH of its own."""
    spec = importlib.util.find_spec("ipywidgets_jsonschema")
    if spec is None or spec.origin is None:
        return []
    return [str(Path(spec.origin).resolve().parent.parent)]


def run(rounds: int) -> dict[str, Any]:
    have_iwj = importlib.util.find_spec("ipywidgets_jsonschema") is not None
    times: dict[str, list[float]] = {"hitl_nb": [], "ipywidgets-jsonschema": []}
    failed: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lab.write_notebook(
            root / "bench.ipynb",
            [SETUP.format(bench=str(ROOT / "benchmarks"), peer_paths=_peer_paths(), size=SIZE)],
        )
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
            lab.browser(pw, root / "profile", 1280, 1000) as ctx,
        ):
            page = lab.open_notebook(ctx, base, "bench.ipynb")
            lab.run_all(page)
            page.wait_for_function(
                "() => document.body.innerText.includes('set up: 42')", timeout=120_000
            )
            for n in range(rounds + 1):  # round 0 warms both up and is not counted
                last = f".hitl-field-field_5f{SIZE - 1:04d}"
                order = [("hitl_nb", OURS, last)]
                if have_iwj:
                    order.append(("ipywidgets-jsonschema", IWJ, ".widget-vbox"))
                if n % 2:
                    order.reverse()
                for name, code, selector in order:
                    ms = page.evaluate(TIME_CELL, [code.format(n=n), selector, 300])
                    if isinstance(ms, str):
                        if name == "hitl_nb":
                            raise RuntimeError(f"no form within 120 s; the cell says: {ms}")
                        failed[name] = " ".join(ms.split())[-160:]
                        have_iwj = False  # it does not render: no further rounds
                        continue
                    if n:
                        times[name].append(ms / 1000)
                    # clear the outputs so the next round renders into an empty page
                    page.evaluate(
                        "window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')"
                    )
                    page.wait_for_timeout(500)
    return {"times": times, "failed": failed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", type=int, default=SIZE, help="properties (default 840)")
    args = parser.parse_args()
    globals()["SIZE"] = args.size
    result = run(args.rounds)
    ours = statistics.median(result["times"]["hitl_nb"])
    print(f"{SIZE} properties, cell run to last widget shown (median of {args.rounds}):")
    rounds = [round(t, 2) for t in result["times"]["hitl_nb"]]
    print(f"  hitl_nb.forms          {ours:.2f} s   {rounds}")
    theirs_times = result["times"]["ipywidgets-jsonschema"]
    if "ipywidgets-jsonschema" in result["failed"]:
        print("  ipywidgets-jsonschema  did not render within 120 s; the cell shows:")
        print("   ", result["failed"]["ipywidgets-jsonschema"])
    elif theirs_times:
        theirs = statistics.median(theirs_times)
        print(f"  ipywidgets-jsonschema  {theirs:.2f} s   {[round(t, 2) for t in theirs_times]}")
        print(f"  speed-up               {theirs / ours:.1f}x")
    else:
        print("  ipywidgets-jsonschema is not installed (pip install ipywidgets-jsonschema==1.2.1)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
