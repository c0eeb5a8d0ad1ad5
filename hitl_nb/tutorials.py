"""``hitl-nb tutorials``: open the tutorial notebooks in JupyterLab.

Each tutorial starts its own mock agent on 127.0.0.1 inside the kernel, so this only has
to start JupyterLab on the notebooks folder. As root (containers, CI machines) it adds
``--allow-root``, which JupyterLab otherwise demands.

The command hands over to JupyterLab with :func:`hitl_nb._process.replace_or_forward`:
on POSIX it *becomes* JupyterLab, so a script that stops ``hitl-nb tutorials`` stops
JupyterLab itself; elsewhere stop signals are forwarded to it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from ._process import replace_or_forward

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
        # LabApp's own default_url ("/lab") is pushed onto the server when JupyterLab is
        # the application started, so ServerApp.default_url would be overwritten: the
        # landing page, the redirect from "/" and the printed URL all come from this one.
        command.append(f"--LabApp.default_url=/lab/tree/{FIRST_TUTORIAL}")
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
    return replace_or_forward(command)


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
