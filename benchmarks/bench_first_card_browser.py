"""From *Run* to the first card's Submit button visible in JupyterLab, a fresh kernel each round.

Run by hand:  python benchmarks/bench_first_card_browser.py [--rounds N] [--profile]

A mock agent runs in its own process (``hitl-nb mock-agent``, as a researcher's agent
would). Each measurement opens the notebook in a fresh Chromium page on a fresh kernel
(nothing run in it before) and runs one cell, timed from the execute request:

- ``hitl_nb``: ``from hitl_nb.notebook import Conversation``, ``Conversation.start`` on
  the agent's approval scenario, the conversation displayed: until the card's Submit
  button is visible (the imports, the first ``Conversation.start``, the envelope check,
  the form's build and the widget models drawn, all in it);
- the peer, ipywidgets-jsonschema 1.2.1 (a benchmark-only dependency, ``pip install
  --target DIR ipywidgets-jsonschema==1.2.1`` with DIR on ``PYTHONPATH``): its import
  and a 10-field form (``bench_forms.big_schema(10)``), until the form is drawn.

Each figure is also split at the first output shown (what the kernel took, then what
the front end took to draw), and "settled" is the last change of the cell's output
(300 ms of quiet, not counted). Round 0 warms the machine up and is not counted; within
a round the two alternate which goes first. Medians and ranges are printed with the
load average at the start and the end: the machine is shared, compare the columns of
one run, and measure a before and an after back to back (``--tree DIR`` runs the
kernels on another checkout's ``hitl_nb``; ``--before DIR`` measures that checkout
in the same rounds, alternating, each in a JupyterLab of its own).

``--profile``: the same cell in a fresh kernel (jupyter_client, no browser) under
cProfile, printing where the kernel's time goes.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_forms import big_schema  # noqa: E402
from bench_forms_browser import QuietPage, _peer_paths  # noqa: E402

from tests.helpers import lab  # noqa: E402

OURS = (
    "hitl_nb",
    "from hitl_nb.notebook import Conversation\n"
    "chat = Conversation.start({url!r}, {{'scenario': 'approval'}})\n"
    "chat",
    ".hitl-card .hitl-submit",
)
PEER = (
    "ipywidgets-jsonschema",
    "import sys; sys.path.extend({paths!r})\n"
    "import ipywidgets as W, ipywidgets_jsonschema as iwj\n"
    "kept = iwj.Form({schema!r})\n"
    "W.VBox(kept._form_element.widgets, layout=W.Layout(width='100%'))",
    ".widget-vbox input",
)

#: JavaScript: run ``code`` as a new cell; resolve with [first output, ``selector``
#: visible, last change of the output] in ms from the execute request, or with the
#: output's text when it shows an error instead (or nothing within 120 s).
TIME_CELL = """
async ([code, selector, quiet]) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  await app.commands.execute('notebook:insert-cell-below');
  const cell = panel.content.activeCell;
  cell.model.sharedModel.setSource(code);
  const out = cell.node;
  let last = 0, first = 0, seen = 0;
  const area = () => out.querySelector('.jp-OutputArea-output');
  const obs = new MutationObserver(() => {
    last = performance.now();
    if (!first && area()) first = last;
  });
  obs.observe(out, {subtree: true, childList: true, attributes: true, characterData: true});
  const t0 = performance.now();
  app.commands.execute('notebook:run-cell');
  for (;;) {
    await new Promise((r) => requestAnimationFrame(r));
    const now = performance.now();
    if (!seen) {
      const found = out.querySelector(selector);
      if (found && found.getBoundingClientRect().height > 0) seen = now;
    }
    const idle = panel.sessionContext.session.kernel.status === 'idle';
    if (seen && idle && now - last >= quiet) break;
    const failed = idle && /Error displaying widget|Traceback|Error:/.test(out.innerText)
        && now - last >= quiet;
    if (failed || now - t0 > 120000) {
      obs.disconnect();
      return out.innerText.slice(0, 300);
    }
  }
  obs.disconnect();
  return [first - t0, seen - t0, last - t0];
}
"""
KERNEL_IDLE = (
    "() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel?.status"
    " === 'idle'"
)
_MEASUREMENTS = itertools.count()


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _agent(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from hitl_nb.cli import main; main()",
            "mock-agent",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().split()[-1]  # "... listening on http://127.0.0.1:PORT"
    return proc, url


def _measure(pw: Any, base: str, code: str, selector: str) -> list[float] | str:
    """One measurement in a fresh browser on a fresh kernel: seconds to the first output,
    to ``selector`` visible and to the last change; or what the cell shows instead."""
    auth = {"Authorization": f"token {lab.TOKEN}"}
    for session in httpx.get(f"{base}/api/sessions", headers=auth).json():
        httpx.delete(f"{base}/api/sessions/{session['id']}", headers=auth).raise_for_status()
    workspace = f"m{next(_MEASUREMENTS)}"  # JupyterLab would reopen the last one's tabs
    url = f"{base}/lab/workspaces/{workspace}/tree/first.ipynb?token={lab.TOKEN}"
    browser = pw.chromium.launch(
        executable_path=lab.CHROMIUM, headless=True, args=lab.CHROMIUM_ARGS
    )
    try:
        page = QuietPage(browser, url, 1280, 1000)
        page.wait_for(KERNEL_IDLE)
        time.sleep(1.0)  # the kernel's own start-up settles (its first idle is early)
        got = page.evaluate(TIME_CELL, [code, selector, 300])
        page.close()
    finally:
        browser.close()
    if isinstance(got, str):
        return " ".join(got.split())[-200:]
    return [ms / 1000 for ms in got]


def run(rounds: int, trees: dict[str, Path]) -> dict[str, list[list[float]]]:
    """``rounds`` counted rounds (and a warm-up): in each, the card once per tree (a
    JupyterLab of its own whose kernels import that tree's ``hitl_nb``) and the peer
    once, the order turning every round."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    have_peer = importlib.util.find_spec("ipywidgets_jsonschema") is not None
    schema, _payload = big_schema(10)
    times: dict[str, list[list[float]]] = {name: [] for name in trees}
    if have_peer:
        times[PEER[0]] = []
    agent, agent_url = _agent({**env, "PYTHONPATH": str(ROOT)})
    try:
        with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
            pw = stack.enter_context(lab.playwright())
            cells = []
            for name, tree in trees.items():
                root = Path(tmp) / f"lab{len(cells)}"
                root.mkdir()
                lab.write_notebook(root / "first.ipynb", ["# the timed cell goes below"])
                kernels = {**env, "PYTHONPATH": str(tree)}
                base = stack.enter_context(lab.jupyter_server(root, "jupyterlab", env=kernels))
                cells.append((name, base, OURS[1].format(url=agent_url), OURS[2]))
            if have_peer:
                code = PEER[1].format(paths=_peer_paths(), schema=schema)
                cells.append((PEER[0], cells[0][1], code, PEER[2]))
            for n in range(rounds + 1):
                turn = n % len(cells)
                for name, base, code, selector in cells[turn:] + cells[:turn]:
                    got = _measure(pw, base, code, selector)
                    if isinstance(got, str):
                        raise RuntimeError(f"{name}: no form; the cell shows: {got}")
                    shown = ", ".join(f"{t:.2f}" for t in got)
                    print(f"  round {n}, {name}: {shown} s (load {_load()})", file=sys.stderr)
                    if n:
                        times[name].append(got)
    finally:
        agent.terminate()
        agent.wait(10)
    return times


def _report(times: dict[str, list[list[float]]], load: tuple[str, str]) -> None:
    print(f"load average (1, 5, 15 min) at the start: {load[0]}; at the end: {load[1]}")
    print("from Run, a fresh kernel each round: median [range] of the counted rounds")
    for name, rows in times.items():
        if not rows:
            print(f"  {name:22} not installed (pip install ipywidgets-jsonschema==1.2.1)")
            continue
        first, seen, last = (sorted(col) for col in zip(*rows, strict=True))
        what = "form drawn    " if name == PEER[0] else "Submit visible"

        def fig(xs: list[float]) -> str:
            return f"{statistics.median(xs):.2f} s [{xs[0]:.2f}-{xs[-1]:.2f}]"

        print(f"  {name:22} {what} {fig(seen)}; first output {fig(first)}; settled {fig(last)}")


def profile(tree: Path) -> None:
    """The timed cell in a fresh kernel under cProfile: where the kernel's time goes."""
    from jupyter_client.manager import start_new_kernel

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    agent, agent_url = _agent(env)
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    try:
        code = (
            "import cProfile, pstats, io, time\n"
            "_p = cProfile.Profile(); _t = time.perf_counter(); _p.enable()\n"
            + OURS[1].format(url=agent_url).rsplit("\n", 1)[0]
            + "\n_b = chat._repr_mimebundle_()"  # what displaying it builds
            + "\n_p.disable(); print(f'cell: {time.perf_counter() - _t:.3f} s')\n"
            "_s = io.StringIO(); pstats.Stats(_p, stream=_s).sort_stats('cumulative')"
            ".print_stats(40); print(_s.getvalue())"
        )
        reply = kc.execute_interactive(code, timeout=120, output_hook=_print_stream)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        agent.terminate()
        agent.wait(10)


def _print_stream(msg: dict[str, Any]) -> None:
    if msg["msg_type"] == "stream":
        print(msg["content"]["text"], end="")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the hitl_nb the kernels import")
    parser.add_argument(
        "--before", type=Path, help="another checkout, measured in the same rounds (before)"
    )
    parser.add_argument("--profile", action="store_true", help="where the kernel's time goes")
    args = parser.parse_args()
    if args.profile:
        profile(args.tree.resolve())
        return 0
    if args.rounds < 1:
        parser.error("--rounds must be at least 1 (round 0 only warms up)")
    start = _load()
    trees = {OURS[0]: args.tree.resolve()}
    if args.before is not None:
        trees = {"hitl_nb (before)": args.before.resolve(), "hitl_nb (after)": trees[OURS[0]]}
    times = run(args.rounds, trees)
    _report(times, (start, _load()))
    return 0


if __name__ == "__main__":
    end_on_sigterm()
    raise SystemExit(main())
