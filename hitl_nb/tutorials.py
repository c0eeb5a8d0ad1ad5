"""``hitl-nb tutorials``: open the tutorial notebooks in JupyterLab.

Each tutorial starts its own mock agent on 127.0.0.1 inside the kernel, so this only has
to start JupyterLab on the notebooks folder. As root (containers, CI machines) it adds
``--allow-root``, which JupyterLab otherwise demands.

On POSIX the command *becomes* JupyterLab (``os.execv``): same process id, so a script
or a service manager that stops ``hitl-nb tutorials`` stops JupyterLab itself, and Ctrl-C
reaches it directly. Where ``exec`` is not available (Windows), JupyterLab runs as a
child and SIGINT / SIGTERM / SIGBREAK are forwarded to it; the command waits for it and
returns its exit status.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = ["FIRST_TUTORIAL", "find_notebooks", "lab_command", "register"]


def find_notebooks(explicit: str | None = None) -> Path:
    """The tutorials folder: ``explicit``, ``./notebooks``, or the checkout's."""
    if explicit:
        candidates = [Path(explicit)]
    else:
        here = Path(__file__).resolve().parent.parent
        candidates = [Path.cwd() / "notebooks", here / "notebooks"]
    for folder in candidates:
        if folder.is_dir() and any(folder.glob("*.ipynb")):
            return folder
    tried = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"no tutorial notebooks found (tried {tried}); run from a checkout of hitl-nb or pass --dir"
    )


#: The tutorial JupyterLab opens first, when the folder has it.
FIRST_TUTORIAL = "00-quickstart.ipynb"


def lab_command(folder: Path, extra: list[str]) -> list[str]:
    """The ``jupyter lab`` command line that opens ``folder`` (at the quickstart)."""
    command = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={folder}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        command.append("--allow-root")
    chose_url = any("default_url" in arg for arg in extra)
    if (folder / FIRST_TUTORIAL).is_file() and not chose_url:
        command.append(f"--ServerApp.default_url=/lab/tree/{FIRST_TUTORIAL}")
    return command + extra


def _run(args: argparse.Namespace) -> int:
    try:
        folder = find_notebooks(args.dir)
    except FileNotFoundError as exc:
        print(f"hitl-nb tutorials: {exc}", file=sys.stderr)
        return 2
    command = lab_command(folder, list(args.lab_args))
    if args.print_command:
        print(" ".join(command))
        return 0
    if importlib.util.find_spec("jupyterlab") is None:
        print(
            "hitl-nb tutorials: JupyterLab is not installed; pip install 'hitl-nb[lab]'",
            file=sys.stderr,
        )
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    return _replace_or_forward(command)


def _replace_or_forward(command: list[str], *, replace: bool = os.name == "posix") -> int:
    """Become ``command`` (``replace``: POSIX ``exec``), or run it and forward stop signals.

    Forwarding: SIGINT, SIGTERM (and SIGBREAK on Windows) received by this process are
    sent on to the child; the child's exit status is returned once it has stopped.
    """
    if replace:
        os.execv(command[0], command)  # does not return
    child = subprocess.Popen(command)
    names = ("SIGINT", "SIGTERM", "SIGBREAK")
    signals = [getattr(signal, n) for n in names if hasattr(signal, n)]

    def forward(signum: int, _frame: FrameType | None) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    previous: dict[int, Any] = {}
    for signum in signals:
        previous[signum] = signal.signal(signum, forward)
    try:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:  # the handler forwarded it; keep waiting
                continue
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``tutorials`` subcommand to the ``hitl-nb`` parser."""
    parser = sub.add_parser(
        "tutorials",
        help="open the tutorial notebooks in JupyterLab",
        description="Start JupyterLab on the tutorial notebooks. Each notebook starts its "
        "own mock agent, so nothing else needs to run. Arguments after -- go to "
        "JupyterLab (e.g. hitl-nb tutorials -- --no-browser --port 8899).",
    )
    parser.add_argument("--dir", help="the notebooks folder (default: ./notebooks)")
    parser.add_argument(
        "--print-command", action="store_true", help="print the JupyterLab command and exit"
    )
    parser.add_argument("lab_args", nargs="*", metavar="-- LAB_ARGS", help="for JupyterLab")
    parser.set_defaults(func=_run)
