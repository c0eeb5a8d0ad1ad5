"""An email's link to a form ready to answer, on a real JupyterHub: the answer page
served by the hitl service against the JupyterLab path, measured in the same run.

    python benchmarks/bench_answer_link.py [--rounds 10] [--lab-rounds 3]

Starts a real JupyterHub (tests/helpers/hub.py: the npm proxy, DummyAuthenticator, the
local process spawner, the hitl service as ``configure(c)`` writes it), a mock agent in
this process, and Chromium. bob logs in to the hub once (its home page: no server
started); each round, alice registers a new ``specific:bob`` task with the service and
bob opens the link his email would carry (built by :class:`hitl_nb.notify._links.AnswerLinks`,
the messages' own code) in a new tab of the same browser:

- **the hub page**: ``{hub}/services/hitl/answer/prompt/<registration>/<prompt>`` (the
  default, ``notify_answer_links="page"``), ready when the page's form shows its Submit;
- **the Lab path**: ``{hub}/hub/user-redirect/lab?hitl-registration=..&hitl-prompt=..``
  (``notify_answer_links="lab"``): the hub starts bob's server if it is stopped, sends
  him to his JupyterLab, whose prompts panel opens that prompt's form (the browser's
  form, no kernel: the panel's default); ready when that form shows its Submit.

Both with bob's server **stopped** (stopped through the hub's API before each round;
the hub page never starts it: checked) and **running**. Time: from just before the
navigation (this process's clock) to the moment a MutationObserver in the page saw the
Submit drawn (the page's ``Date.now()``, the same machine's clock). The first opening
of the hub page also makes the service's OAuth round trip (its cookie is set then):
printed apart, left out of the median. Each round's prompt is answered after, so bob
has one open prompt at a time. Medians and p95, with the load average at the start and
the end: the machine is shared; compare the columns of one run.

Also printed: the answer page's JavaScript and CSS as served, gzip-compressed.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402
from hitl_nb.client import GatewayClient, GatewayInfo  # noqa: E402
from hitl_nb.gateway._page import STATIC_DIR  # noqa: E402
from hitl_nb.mock_agent import MockAgent  # noqa: E402
from hitl_nb.notify._links import AnswerLinks  # noqa: E402
from tests.helpers import lab  # noqa: E402
from tests.helpers.hub import Hub, running_hub  # noqa: E402
from tests.helpers.tasks import start_task  # noqa: E402
from tests.helpers.until import until  # noqa: E402

#: JavaScript (a tab's init script, ``%s`` the prompt id): when the form of that prompt
#: shows its Submit, on the hub page or in JupyterLab's panel.
READY = """
(() => {
  const pid = %s;
  const mark = () => {
    if (window.__hitlReady) return;
    const page = document.querySelector('form.hitl-page-form .hitl-page-submit');
    const card = document.querySelector('.hitl-lab-form-card');
    const lab = card && (card.dataset.key || '').endsWith(pid)
      ? card.querySelector('.hitl-lab-submit') : null;
    for (const submit of [page, lab]) {
      if (submit && submit.getBoundingClientRect().height > 0) {
        window.__hitlReady = Date.now();
        return;
      }
    }
  };
  new MutationObserver(mark).observe(document, {subtree: true, childList: true,
                                                attributes: true});
})();
"""
NO_NEWS = {"fetchNews": "false"}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def line(name: str, values: list[float]) -> str:
    if not values:
        return f"  {name:44s} (no rounds)"
    return (
        f"  {name:44s} median {statistics.median(values):6.2f} s   "
        f"p95 {p95(values):6.2f} s   ({len(values)} rounds)"
    )


class Bench:
    """The hub, the agent, alice's client, and bob's logged-in browser context."""

    def __init__(self, hub: Hub, agent: MockAgent, context: Any) -> None:
        self.hub = hub
        self.agent = agent
        self.context = context
        alice = GatewayInfo(hub.service, hub.user_token("alice"), "alice", hub.service + "api/")
        bob = GatewayInfo(hub.service, hub.user_token("bob"), "bob", hub.service + "api/")
        self.alice = GatewayClient(alice)
        self.bob = GatewayClient(bob)
        self.page_links = AnswerLinks(hub.url, hub=True, page=hub.url + "services/hitl/answer/")
        self.lab_links = AnswerLinks(hub.url, hub=True)
        self.spawns = 0

    def prompt(self) -> tuple[str, str]:
        """A new ``specific:bob`` prompt registered by alice: (registration, prompt)."""
        # On a thread of its own: Playwright's sync API holds this thread's event loop.
        with ThreadPoolExecutor(1) as pool:
            started = pool.submit(
                asyncio.run, start_task(self.agent.url, "specific", responder="bob")
            )
            task = started.result()
        reg = self.alice.register(self.agent.url, task.id)
        (prompt,) = reg["prompts"]
        return str(reg["id"]), str(prompt["prompt_id"])

    def server(self) -> Any:
        with self.hub.admin() as admin:
            return (admin.get("users/bob").json().get("servers") or {}).get("")

    def stop_server(self) -> None:
        if self.server() is None:
            return
        with self.hub.admin() as admin:
            admin.delete("users/bob/server")
        until(lambda: self.server() is None, timeout=120, what="bob's server to stop")

    def open(self, link: str, pid: str, timeout: float = 180) -> float:
        """Seconds from navigating to ``link`` to the prompt's form ready."""
        page = self.context.new_page()
        page.add_init_script(READY % json.dumps(pid))
        t0 = time.time()
        page.goto(link, wait_until="commit", timeout=timeout * 1000)
        page.wait_for_function("() => window.__hitlReady", timeout=timeout * 1000)
        ready = page.evaluate("window.__hitlReady") / 1000
        page.close()
        return float(ready - t0)

    def round(self, path: str, stopped: bool) -> float:
        if stopped:
            self.stop_server()
        else:
            self.hub.start_server("bob")
        reg, pid = self.prompt()
        links = self.page_links if path == "page" else self.lab_links
        took = self.open(links.prompt(reg, pid), pid)
        if path == "page" and stopped:
            assert self.server() is None, "the hub page started bob's server"
        self.bob.answer(reg, pid, {"approve": True})
        return took


def page_weight() -> tuple[int, int]:
    """The answer page's JavaScript and CSS as the service serves them: bytes, gzip."""
    raw = gz = 0
    for name in ("answer.js", "answer.css"):
        data = (STATIC_DIR / name).read_bytes()
        raw += len(data)
        gz += len(gzip.compress(data, 9))
    return raw, gz


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="rounds of the hub page")
    parser.add_argument("--lab-rounds", type=int, default=3, help="rounds of the Lab path")
    args = parser.parse_args()
    if not (STATIC_DIR / "answer.js").is_file():
        sys.exit("run 'jlpm build:page' first (hitl_nb/gateway/static/answer.js is missing)")
    load = os.getloadavg()
    results: dict[str, list[float]] = {}
    first = 0.0
    with tempfile.TemporaryDirectory() as d, MockAgent() as agent:
        with running_hub(Path(d) / "hub") as hub:
            news = hub.root / "home" / "bob" / ".jupyter" / "lab" / "user-settings"
            news = news / "@jupyterlab" / "apputils-extension"
            news.mkdir(parents=True, exist_ok=True)
            (news / "notification.jupyterlab-settings").write_text(json.dumps(NO_NEWS))
            chromium = lab.Chromium()
            with chromium(1280, 800) as context:
                login = context.new_page()
                login.goto(f"{hub.url}hub/login?next=/hub/home")
                login.fill("input[name=username]", "bob")
                login.fill("input[name=password]", "any")
                login.click("input[type=submit], button[type=submit]")
                login.wait_for_url("**/hub/home", timeout=60_000)
                login.close()
                bench = Bench(hub, agent, context)
                first = bench.round("page", stopped=True)  # with the service's OAuth
                plan = [
                    ("page", True, args.rounds),
                    ("lab", True, args.lab_rounds),
                    ("page", False, args.rounds),
                    ("lab", False, max(args.lab_rounds, 5)),
                ]
                for path, stopped, n in plan:
                    key = f"{path}, bob's server {'stopped' if stopped else 'running'}"
                    lab_warm = path == "lab" and not stopped
                    if lab_warm:
                        bench.round(path, stopped)  # the server's first Lab load: not counted
                    results[key] = [bench.round(path, stopped) for _ in range(n)]
                    print(line(key, results[key]), flush=True)
    end = os.getloadavg()
    raw, gz = page_weight()
    print()
    print("An email's link (bob logged in to the hub) to the prompt's form ready:")
    print(f"  the hub page's first opening (with the service's OAuth round trip): {first:.2f} s")
    for key, values in results.items():
        print(line(key, values))
    print(f"The answer page's JavaScript and CSS: {raw / 1024:.1f} KB, {gz / 1024:.1f} KB gzip")
    print(f"load average: {load[0]:.2f} at the start, {end[0]:.2f} at the end (2 cores)")


if __name__ == "__main__":
    end_on_sigterm()
    main()
