"""JupyterLab's prompts panel (hitl-nb's JupyterLab extension), measured in Chromium.

Run by hand:  python benchmarks/bench_lab_panel.py [--rounds N] [--loads N] [--prompts N]

Each figure beside a peer measured in the same run (the ratio is printed):

1. *Prompt to notification*: an agent's prompt (its INPUT_REQUIRED status, by the
   agent's own timestamp) to the notification visible in a JupyterLab page showing
   another notebook; the peer is the card of the same prompt appearing in the page of the
   notebook whose conversation follows the task. Both for an agent that pushes (A2A push
   notifications, the mock agent's default) and one that only streams. Each round starts
   a conversation whose prompt comes 2 s later, so the gateway watches the task first.
2. *"Answer" to form ready*: the Answer command to the prompt's form drawn in the panel
   and ready to submit: the browser's form (no kernel), cold (the first Answer of a
   page) and warm; then, in the same run, the old path (the setting
   ``answerWithKernel`` on, the page loaded again): the notebook's card drawn by the
   panel's kernel, cold (the kernel started by that click) and warm; the peer is the
   same card drawn in a notebook cell of a warm kernel (``prompt_card(...)``).
3. *The panel with N open prompts drawn* (1,000 by default, put in the gateway's store):
   from opening the panel (the page read the list when it loaded) to its rows drawn;
   the peer is JupyterLab's file browser opening a folder of as many files, to its rows
   drawn, less the server's time to list it.
4. *Lab's load time with and without the extension*: a page load, from navigation to
   JupyterLab's ``restored``, on four servers started alike, two of them without the
   extension (their ``labextensions_path`` lists every other one), started with,
   without, without, with (the server started first was measured slower, whichever it
   was), each load on each server in turn.
5. *The extension's JavaScript*: the files of the production build (``jlpm build:prod``),
   all of them, gzip-compressed, and the part loaded with the page (the card's module
   is loaded at the first Answer).

Medians and p95 are printed with the load average at the start and the end: the machine
is shared; compare the columns of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import gzip
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402
from hitl_nb.client import HitlClient  # noqa: E402
from tests.helpers import lab  # noqa: E402
from tests.helpers.panel import seed_prompts, wait_ready  # noqa: E402

STATIC = ROOT / "hitl_nb" / "labextension" / "static"
SHARE = Path(sys.prefix) / "share" / "jupyter" / "labextensions"

#: JavaScript (an init script): when each notification appears or changes, and each
#: card, by Date.now() (the agent's timestamps are the same machine's clock).
WATCH = """
window.__hitl = {toasts: [], cards: []};
new MutationObserver(() => {
  for (const t of document.querySelectorAll('.Toastify__toast')) {
    const text = t.innerText;
    if (t.__hitlText !== text) {
      t.__hitlText = text;
      window.__hitl.toasts.push({text, at: Date.now()});
    }
  }
  for (const c of document.querySelectorAll('.hitl-card')) {
    if (!c.__hitlSeen && c.getBoundingClientRect().height > 0) {
      c.__hitlSeen = true;
      window.__hitl.cards.push({text: c.innerText, at: Date.now()});
    }
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""
#: JavaScript (an init script): JupyterLab restored, in ms since navigation started.
RESTORED = """
(function wait() {
  if (window.jupyterapp) {
    window.jupyterapp.restored.then(() => { window.__restored = performance.now(); });
  } else {
    setTimeout(wait, 5);
  }
})();
"""
#: JavaScript: run ``code`` in a new cell of the notebook in front (not waiting).
NEW_CELL = """
async (code) => {
  const app = window.jupyterapp;
  await app.commands.execute('notebook:insert-cell-below');
  app.shell.currentWidget.content.activeCell.model.sharedModel.setSource(code);
  void app.commands.execute('notebook:run-cell');
}
"""
#: JavaScript: ms from running ``code`` in a new cell to ``selector`` visible in it.
TIME_CELL = """
async ([code, selector]) => {
  const app = window.jupyterapp;
  await app.commands.execute('notebook:insert-cell-below');
  const cell = app.shell.currentWidget.content.activeCell;
  cell.model.sharedModel.setSource(code);
  const t0 = performance.now();
  void app.commands.execute('notebook:run-cell');
  for (;;) {
    await new Promise((r) => requestAnimationFrame(r));
    const found = cell.node.querySelector(selector);
    if (found && found.getBoundingClientRect().height > 0) return performance.now() - t0;
    if (performance.now() - t0 > 120000) return -1;
  }
}
"""
#: JavaScript: ms from a click on the Answer of the row of ``key`` to the form drawn
#: (of the card that names the prompt's task, ``task``).
TIME_ANSWER = """
async ([key, task]) => {
  const app = window.jupyterapp;
  const t0 = performance.now();
  void app.commands.execute('hitl-nb:answer-prompt', {key});
  for (;;) {
    await new Promise((r) => requestAnimationFrame(r));
    const card = document.querySelector('.hitl-lab-card .hitl-card');
    if (card && card.innerText.includes(task) &&
        card.querySelector('.hitl-form .hitl-submit')?.getBoundingClientRect().height > 0) {
      return performance.now() - t0;
    }
    if (performance.now() - t0 > 120000) return -1;
  }
}
"""
#: JavaScript: ms from the Answer command to the browser's form of prompt ``key`` drawn
#: in the panel, its Submit visible (no kernel).
TIME_FORM = """
async ([key]) => {
  const app = window.jupyterapp;
  const t0 = performance.now();
  void app.commands.execute('hitl-nb:answer-prompt', {key});
  for (;;) {
    await new Promise((r) => requestAnimationFrame(r));
    const card = document.querySelector('.hitl-lab-form-card');
    if (card && card.dataset.key === key &&
        card.querySelector('.hitl-lab-submit')?.getBoundingClientRect().height > 0) {
      return performance.now() - t0;
    }
    if (performance.now() - t0 > 120000) return -1;
  }
}
"""
#: JavaScript: ms from running command ``name`` to ``count`` elements of ``selector``
#: drawn (after the next frame), less the server's time for a request whose URL has
#: ``part`` made meanwhile (none: "").
TIME_OPEN = """
async ([name, args, selector, count, part]) => {
  const t0 = performance.now();
  void window.jupyterapp.commands.execute(name, args);
  for (;;) {
    await new Promise((r) => requestAnimationFrame(r));
    const found = document.querySelectorAll(selector);
    if (found.length >= count && found[0].getBoundingClientRect().height > 0) break;
    if (performance.now() - t0 > 120000) return -1;
  }
  const drawn = performance.now() - t0;
  if (!part) return drawn;
  const served = performance.getEntriesByType('resource')
    .filter(e => e.name.includes(part) && e.startTime >= t0)
    .reduce((sum, e) => sum + (e.responseEnd - e.requestStart), 0);
  return drawn - served;
}
"""


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def _line(name: str, values: list[float], unit: str = "s", scale: float = 1.0) -> str:
    if not values:
        return f"  {name}: no figures"
    med = statistics.median(values) * scale
    return (
        f"  {name}: median {med:.3f} {unit}, p95 {_p95(values) * scale:.3f} {unit}, "
        f"min {min(values) * scale:.3f}, max {max(values) * scale:.3f} ({len(values)})"
    )


def _ratio(name: str, ours: list[float], peer: list[float]) -> str:
    if not ours or not peer:
        return ""
    return f"  ratio {name}: {statistics.median(ours) / statistics.median(peer):.2f}"


def _in_thread(coro: Any) -> Any:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def _asked_at(url: str, task_id: str) -> float:
    """When the task went INPUT_REQUIRED, by the agent's clock (seconds since the epoch)."""
    async with HitlClient(url) as client:
        task = await client.get_task(task_id)
    stamp = task.status.timestamp
    assert stamp, "the agent gave no timestamp"
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _page(context: Any, base: str, path: str, workspace: str) -> Any:
    page = context.new_page()
    page.add_init_script(WATCH)
    page.goto(f"{base}/lab/workspaces/{workspace}/tree/{path}?token={lab.TOKEN}")
    page.wait_for_function(
        "() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel"
        "?.status === 'idle'",
        timeout=180_000,
    )
    wait_ready(page)
    return page


def _until(check: Any, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("gave up waiting")
        time.sleep(0.05)


def _first_toast_since(page: Any, start: float) -> float | None:
    """When a notification for this user first appeared or changed since ``start``."""
    times = [
        t["at"]
        for t in page.evaluate("window.__hitl.toasts")
        if "for you" in t["text"] and t["at"] >= start
    ]
    return times[0] if times else None


def _card_shown(page: Any, prompt_id: str) -> float | None:
    """When the card of ``prompt_id`` appeared."""
    times = [c["at"] for c in page.evaluate("window.__hitl.cards") if prompt_id in c["text"]]
    return times[0] if times else None


def _kernel_says(page: Any, code: str) -> str:
    return lab.kernel(page, code).strip()


def notifications(
    context: Any, base: str, rounds: int
) -> tuple[dict[str, list[float]], tuple[Any, Any]]:
    """Part 1 (and the prompts part 2 answers): per agent kind, seconds from the prompt
    to the notification, and to the notebook's card (the peer); and the two pages."""
    asking = _page(context, base, "asking.ipynb", "asking")
    other = _page(context, base, "other.ipynb", "other")
    lab.kernel(
        asking,
        "from hitl_nb.mock_agent import MockAgent\nfrom hitl_nb.notebook import Conversation\n"
        "agents = {'pushes': MockAgent().start(),"
        " 'streams': MockAgent(push_notifications=False).start()}\nchats = []",
    )
    last = "print(chats[-1].cards[-1].prompt_id if chats and chats[-1].cards else '')"
    out: dict[str, list[float]] = {}
    for n in range(rounds + 1):  # round 0 warms up, not counted
        for kind in ("pushes", "streams"):
            before = _kernel_says(asking, last)
            start = other.evaluate("Date.now()")
            code = (
                f"chats.append(Conversation.start(agents[{kind!r}].url, {{'scenario': "
                "'approval', 'start_delay_seconds': 2}, poll_interval=1))\nchats[-1]"
            )
            asking.evaluate(NEW_CELL, code)
            prompt_id = _until(partial(_new_prompt, asking, last, before))
            url, task_id = _kernel_says(
                asking, "print(chats[-1].link.client.agent, chats[-1].task.id)"
            ).split()
            told = _until(partial(_first_toast_since, other, start))
            card = _until(partial(_card_shown, asking, prompt_id))
            asked = _in_thread(_asked_at(url, task_id))
            if n:
                out.setdefault(f"notification, agent {kind}", []).append(told / 1000 - asked)
                out.setdefault(f"notebook's card, agent {kind}", []).append(card / 1000 - asked)
            print(
                f"  round {n} ({kind}): notification {told / 1000 - asked:.3f} s, "
                f"card {card / 1000 - asked:.3f} s (load {_load()})",
                file=sys.stderr,
            )
            # Dismissed, as a person who saw it would (the next one is told on its own).
            other.evaluate(
                "() => { void window.jupyterapp.commands.execute("
                "'apputils:dismiss-notification', {}); }"
            )
    return out, (asking, other)


def _new_prompt(page: Any, code: str, before: str) -> str | None:
    now = _kernel_says(page, code)
    return now if now and now != before else None


def _answer_with_kernel(base: str, on: bool) -> None:
    """Turn the panel's ``answerWithKernel`` setting on or off (the page reads it when
    it loads)."""
    import httpx

    raw = '{"answerWithKernel": %s}' % ("true" if on else "false")
    reply = httpx.put(
        f"{base}/lab/api/settings/hitl-nb:plugin",
        json={"raw": raw},
        headers={"Authorization": f"token {lab.TOKEN}"},
        timeout=60,
    )
    reply.raise_for_status()


def answers(asking: Any, other: Any, base: str, warm: int) -> dict[str, list[float]]:
    """Part 2: seconds from Answer to the form ready: the browser's form (no kernel), then
    the kernel's card, each cold then warm; the peer in a cell."""
    import httpx

    items = httpx.get(
        f"{base}/hitl/lab/prompts", headers={"Authorization": f"token {lab.TOKEN}"}, timeout=60
    ).json()["items"]
    chosen = [i for i in items if i["may_answer"]][: warm + 1]
    out: dict[str, list[float]] = {
        "form, cold": [],
        "form, warm": [],
        "answer, cold": [],
        "answer, warm": [],
        "notebook cell": [],
    }
    kernels = len(
        httpx.get(f"{base}/api/kernels", headers={"Authorization": f"token {lab.TOKEN}"}).json()
    )
    for n, item in enumerate(chosen):
        ms = other.evaluate(TIME_FORM, [item["key"]])
        assert ms > 0, "the browser's form did not show"
        out["form, cold" if n == 0 else "form, warm"].append(ms / 1000)
    after = len(
        httpx.get(f"{base}/api/kernels", headers={"Authorization": f"token {lab.TOKEN}"}).json()
    )
    assert after == kernels, "the browser's form started a kernel"
    _answer_with_kernel(base, True)
    other.reload()
    other.wait_for_function("() => window.jupyterapp?.shell !== undefined", timeout=120_000)
    wait_ready(other)
    for n, item in enumerate(chosen):
        key = item["key"]
        ms = other.evaluate(TIME_ANSWER, [key, item["task_id"]])
        assert ms > 0, "the card's form did not show"
        out["answer, cold" if n == 0 else "answer, warm"].append(ms / 1000)
        registration, prompt_id = key.split("/")
        code = (
            "from hitl_nb.notebook import prompt_card\n"
            f"prompt_card({registration!r}, {prompt_id!r})"
        )
        ms = asking.evaluate(TIME_CELL, [code, ".hitl-form .hitl-submit"])
        assert ms > 0, "the notebook's card did not show"
        if n:
            out["notebook cell"].append(ms / 1000)
        print(
            f"  answer {n}: panel {out['answer, cold' if n == 0 else 'answer, warm'][-1]:.3f} s,"
            f" cell {ms / 1000:.3f} s (load {_load()})",
            file=sys.stderr,
        )
    _answer_with_kernel(base, False)
    return out


def listing(context: Any, base: str, root: Path, count: int, loads: int) -> dict[str, list[float]]:
    """Part 3: ms from opening the panel (holding ``count`` prompts) to its rows drawn;
    the file browser opening a folder of as many files beside it (less the server's
    time to list the folder, which the panel's list does not wait for: it has it)."""
    folder = root / "many"
    folder.mkdir()
    for n in range(count):
        (folder / f"file-{n:05d}.txt").write_text("x")
    seed_prompts(root / ".hitl", count, text="Prompt {n} of the crowd: approve?")
    time.sleep(20)  # the gateway's feed reads the store again (its recheck)
    out: dict[str, list[float]] = {"panel drawn": [], "file browser drawn": []}
    formatted = f"{count:,}"
    for n in range(loads):
        page = context.new_page()
        page.goto(f"{base}/lab/workspaces/list{n}?reset&token={lab.TOKEN}")
        page.wait_for_function(
            f"() => (document.querySelector('.hitl-lab-summary')?.textContent || '')"
            f".includes('{formatted} prompts open')",
            timeout=120_000,
        )
        page.wait_for_timeout(1000)  # JupyterLab's own start-up is over
        ms = page.evaluate(TIME_OPEN, ["hitl-nb:open-prompts", {}, ".hitl-lab-row", 5, ""])
        out["panel drawn"].append(ms)
        args = {"path": "/many"}
        ms = page.evaluate(
            TIME_OPEN, ["filebrowser:go-to-path", args, ".jp-DirListing-item", count, "many"]
        )
        out["file browser drawn"].append(ms)
        print(
            f"  load {n}: panel {out['panel drawn'][-1]:.0f} ms, files "
            f"{out['file browser drawn'][-1]:.0f} ms (load {_load()})",
            file=sys.stderr,
        )
        page.close()
    return out


@contextlib.contextmanager
def _without_extension(tmp: Path) -> Iterator[str]:
    """``--LabApp.labextensions_path`` listing every installed extension but hitl-nb."""
    others = tmp / "labextensions"
    others.mkdir()
    for entry in SHARE.iterdir():
        if entry.name != "hitl-nb":
            (others / entry.name).symlink_to(entry.resolve())
    yield f"--LabApp.labextensions_path={others}"


def loading(context: Any, servers: list[tuple[str, str]], loads: int) -> dict[str, list[float]]:
    """Part 4: seconds from navigation to ``restored``, each load on each server in turn
    (servers of the same side pooled)."""
    out: dict[str, list[float]] = {name: [] for name, _ in servers}
    for n in range(loads + 1):
        turn = n % len(servers)
        for name, base in servers[turn:] + servers[:turn]:
            page = context.new_page()
            page.add_init_script(RESTORED)
            page.goto(f"{base}/lab/workspaces/load{n}?reset&token={lab.TOKEN}")
            ms = page.wait_for_function("() => window.__restored", timeout=120_000).json_value()
            if n:
                out[name].append(ms / 1000)
            page.close()
    return out


def sizes() -> list[str]:
    files = sorted(STATIC.glob("*.js"))
    if not files or any(f.name.endswith(".map") for f in STATIC.iterdir()):
        return ["  (build it first for production: jlpm build:prod)"]
    total = sum(f.stat().st_size for f in files)
    packed = sum(len(gzip.compress(f.read_bytes(), 9)) for f in files)
    lazy = [f for f in files if "CardHost" in f.read_text(errors="replace")]
    eager = total - sum(f.stat().st_size for f in lazy)
    return [
        f"  JavaScript: {total / 1024:.1f} KiB in {len(files)} files, {packed / 1024:.1f} KiB "
        f"gzip; {eager / 1024:.1f} KiB with the page, the rest at the first Answer"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="prompts per agent kind")
    parser.add_argument("--warm", type=int, default=10, help="warm Answer clicks")
    parser.add_argument("--prompts", type=int, default=1000, help="open prompts listed")
    parser.add_argument("--loads", type=int, default=10, help="page loads per side")
    parser.add_argument(
        "--only",
        nargs="*",
        default=["notify", "answer", "panel", "load"],
        help="the parts to run (notify, answer, panel, load)",
    )
    args = parser.parse_args()
    print(f"load average at start: {_load()}")
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        roots = {name: Path(tmp) / name for name in ("main", "crowd")}
        for root in roots.values():
            root.mkdir()
        lab.write_notebook(roots["main"] / "asking.ipynb", ["# conversations below"])
        lab.write_notebook(roots["main"] / "other.ipynb", ["1 + 1"])
        pw = stack.enter_context(lab.playwright())
        context = stack.enter_context(lab.browser(pw, Path(tmp) / "profile", 1400, 900))
        if {"notify", "answer"} & set(args.only):
            base = stack.enter_context(lab.jupyter_server(roots["main"], "jupyterlab"))
            got, (asking, other) = notifications(context, base, args.rounds)
            results.update(got)
            if "answer" in args.only:
                results.update(answers(asking, other, base, args.warm))
        if "panel" in args.only:
            crowd = stack.enter_context(lab.jupyter_server(roots["crowd"], "jupyterlab"))
            results.update(listing(context, crowd, roots["crowd"], args.prompts, args.loads))
        if "load" in args.only:
            # Two servers a side, started with, without, without, with: a server started
            # earlier or later than its peer is not what is measured.
            without_path = stack.enter_context(_without_extension(Path(tmp)))
            servers = []
            for n, name in enumerate(
                ("with the extension", "without", "without", "with the extension")
            ):
                root = Path(tmp) / f"load{n}"
                root.mkdir()
                extra = () if name.startswith("with ") else (without_path,)
                base = stack.enter_context(lab.jupyter_server(root, "jupyterlab", *extra))
                servers.append((name, base))
            results.update(loading(context, servers, args.loads))
    print(f"load average at end: {_load()}")
    report(results, args.prompts)


def report(results: dict[str, list[float]], prompts: int) -> None:
    """The figures, each beside its peer."""
    if "notification, agent pushes" in results:
        _report_notifications(results)
    if "answer, warm" in results:
        print("Answer to the form ready (seconds):")
        print(_line("the browser's form, cold (no kernel)", results["form, cold"]))
        print(_line("the browser's form, warm", results["form, warm"]))
        print(_line("old path: cold (the panel's kernel started)", results["answer, cold"]))
        print(_line("warm", results["answer, warm"]))
        print(_line("peer: the same card in a notebook cell", results["notebook cell"]))
        print(_ratio("warm / cell", results["answer, warm"], results["notebook cell"]))
        print(_ratio("form cold / kernel cold", results["form, cold"], results["answer, cold"]))
    if "panel drawn" in results:
        print(f"The panel with {prompts:,} open prompts, opened to its rows drawn (ms):")
        print(_line("the panel", results["panel drawn"], "ms"))
        print(_line("peer: the file browser, as many files", results["file browser drawn"], "ms"))
        print(_ratio("panel / file browser", results["panel drawn"], results["file browser drawn"]))
    if "without" in results:
        print("JupyterLab's load, navigation to restored (seconds):")
        print(_line("with the extension", results["with the extension"]))
        print(_line("without", results["without"]))
        delta = statistics.median(results["with the extension"]) - statistics.median(
            results["without"]
        )
        print(f"  difference of the medians: {delta * 1000:+.0f} ms")
        print(_ratio("with / without", results["with the extension"], results["without"]))
    print("The extension's size:")
    for line in sizes():
        print(line)


def _report_notifications(results: dict[str, list[float]]) -> None:
    print("Prompt to notification (seconds from the agent's INPUT_REQUIRED):")
    for kind in ("pushes", "streams"):
        ours, peer = (
            results[f"notification, agent {kind}"],
            results[f"notebook's card, agent {kind}"],
        )
        print(_line(f"notification, agent {kind}", ours))
        print(_line(f"peer: the notebook's card, agent {kind}", peer))
        print(_ratio("notification / card", ours, peer))


if __name__ == "__main__":
    end_on_sigterm()
    main()
