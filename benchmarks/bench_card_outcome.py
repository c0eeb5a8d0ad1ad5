"""A card learns that its prompt was answered elsewhere: from the gateway's forward to the
card showing the outcome.

Run by hand:  python benchmarks/bench_card_outcome.py [--trials 20] [--before CHECKOUT]

A Jupyter server with the extension and named users (alice, bob, carol: the tests'
IdentityProvider; the server is alice's, as under JupyterHub), the mock agent, and a
kernel that server started, running a notebook cell as a person would::

    chat = Conversation.start(agent, "approval")   # its card answers through the gateway

Each trial starts such a conversation, waits until its task is registered with the
gateway, waits a random 0.5-2.5 s (the card's timer is anywhere in its round), then
answers the prompt as JupyterLab's prompts panel does (``POST hitl/api/tasks/{id}/
prompts/{pid}/answer`` as alice). The figure is the time from that call returning (the
gateway forwarded the answer) to the card's ``outcome`` being set in the kernel (a
thread in the kernel notes the time, polling every 5 ms; one clock, one machine).

With ``--before``, the same run also measures the code of that checkout (e.g. a
``git worktree`` of the last release: its server and kernel
run with that ``PYTHONPATH``) and of this checkout, one after the other; medians and p95
are printed with the load average (the machine is shared: compare the columns of one run).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

START = """
import threading, time
from hitl_nb.notebook import Conversation
chat = Conversation.start({agent!r}, "approval")
settled_at = None
def _note(card):
    global settled_at
    while card.outcome is None:
        time.sleep(0.005)
    settled_at = time.time()
"""

STATE = """
import json
card = chat.cards[-1] if chat.cards else None
if card is not None and chat.registration and not getattr(chat, "_bench_noted", False):
    chat._bench_noted = True
    threading.Thread(target=_note, args=(card,), daemon=True).start()
print("RESULT" + json.dumps({{
    "registration": chat.registration,
    "prompt_id": card.prompt_id if card is not None else None,
    "noted": getattr(chat, "_bench_noted", False),
    "settled_at": settled_at,
}}))
"""


def _child(root: Path, trials: int) -> list[float]:
    """Measure with the code at ``root`` (this process's path starts there)."""
    import httpx

    from hitl_nb.mock_agent import MockAgent
    from tests.helpers.jupyter_process import jupyter_server
    from tests.helpers.jupyter_users import auth
    from tests.helpers.server_kernel import result_of, server_kernel
    from tests.helpers.until import until

    owner = {"JUPYTERHUB_API_TOKEN": "alice-token", "JUPYTERHUB_USER": "alice"}
    seconds: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, MockAgent() as agent:
        folder = Path(tmp)
        with jupyter_server(folder, ready_headers=auth("alice"), env=owner) as url:
            with server_kernel(url, "alice-token", folder / "runtime") as notebook:
                for _ in range(trials):
                    notebook(START.format(agent=agent.url))
                    state = until(
                        lambda: (s := result_of(notebook(STATE.format())))["noted"] and s,
                        what="the task registered with the gateway",
                    )
                    time.sleep(random.uniform(0.5, 2.5))
                    path = (
                        f"hitl/api/tasks/{state['registration']}/prompts/"
                        f"{state['prompt_id']}/answer"
                    )
                    r = httpx.post(
                        url + path,
                        json={"payload": {"approve": True}},
                        headers=auth("alice"),
                        timeout=60,
                    )
                    forwarded = time.time()
                    assert r.status_code == 200, r.text
                    done = until(
                        lambda: result_of(notebook(STATE.format()))["settled_at"],
                        timeout=60,
                        interval=0.05,
                        what="the card's outcome",
                    )
                    seconds.append(max(0.0, done - forwarded))
                    notebook("chat.close()")
    return seconds


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--before", help="a checkout of the code to compare with")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        root = Path(args.child)
        sys.path.insert(0, str(root))
        print(json.dumps(_child(root, args.trials)))
        return
    load = [os.getloadavg()[0]]
    rows = []
    roots = [("before", Path(args.before))] if args.before else []
    for label, root in (*roots, ("after", HERE)):
        env = {**os.environ, "PYTHONPATH": str(root)}
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(root), "--trials", str(args.trials)],
            env=env,
            cwd=root,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        seconds = json.loads(out.strip().splitlines()[-1])
        rows.append((label, root, seconds))
    load.append(os.getloadavg()[0])
    print(
        f"forward -> card outcome, {args.trials} trials each; load {load[0]:.2f} -> {load[1]:.2f}"
    )
    print(f"{'code':<8} {'median s':>9} {'p95 s':>7} {'max s':>7}  where")
    for label, root, seconds in rows:
        print(
            f"{label:<8} {statistics.median(seconds):>9.3f} {_p95(seconds):>7.3f} "
            f"{max(seconds):>7.3f}  {root}"
        )


if __name__ == "__main__":
    main()
