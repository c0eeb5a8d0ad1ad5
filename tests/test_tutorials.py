import argparse
import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import nbformat
import pytest

from hitl_nb import tutorials
from tests.helpers.ports import free_port
from tests.helpers.tutorials import NEEDS_PYTHON, skip_reason
from tests.helpers.until import until


def parse(*argv):
    parser = argparse.ArgumentParser()
    tutorials.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["tutorials", *argv])


def test_finds_the_checkouts_notebooks(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no ./notebooks here: falls back to the checkout's
    folder = tutorials.find_notebooks()
    assert folder.name == "notebooks" and any(folder.glob("01-*.ipynb"))


def test_explicit_folder_without_notebooks_is_a_clear_error(tmp_path, capsys):
    args = parse("--dir", str(tmp_path / "nowhere"))
    assert args.func(args) == 2
    assert "no tutorial notebooks found" in capsys.readouterr().err


def test_command_opens_the_folder_and_passes_arguments_through(capsys):
    args = parse("--print-command", "--", "--no-browser", "--port", "8899")
    assert args.func(args) == 0
    line = capsys.readouterr().out
    assert "-m jupyterlab --notebook-dir=" in line and line.rstrip().endswith("--port 8899")


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX only")
def test_root_gets_allow_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert "--allow-root" in tutorials.lab_command(Path("."), [])
    assert tutorials.lab_command(Path("."), ["--allow-root"]).count("--allow-root") == 1
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "--allow-root" not in tutorials.lab_command(Path("."), [])


# --- stopping `hitl-nb tutorials` stops JupyterLab -------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes; on Linux /proc says so.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


@pytest.mark.skipif(os.name != "posix", reason="signals as on POSIX")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_forwarding_stops_the_child(tmp_path, signum):
    # Where exec is unavailable, the command runs JupyterLab as a child: a stop signal
    # sent to the command must reach the child, and the command returns its status.
    pidfile = tmp_path / "child.pid"
    child = (
        "import os, pathlib, signal, sys, time\n"
        "signal.signal(signal.SIGINT, lambda *a: sys.exit(3))\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(3))\n"
        # The pid file says the child is ready: written once its handlers are in place
        # (before, a stop signal could come first on a loaded machine: exit -15).
        f"pathlib.Path({str(pidfile)!r}).write_text(str(os.getpid()))\n"
        # Short sleeps: Python runs a signal's handler between bytecodes, and a signal
        # that lands after the last check but before a sleep's system call waits for
        # the sleep to end (Python 3.13 checks less often: 6 in 1,200 under load).
        "for _ in range(600): time.sleep(0.1)\n"
    )
    parent = (
        "import sys\n"
        "from hitl_nb._process import replace_or_forward\n"
        f"sys.exit(replace_or_forward([sys.executable, '-c', {child!r}], replace=False))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", parent], env=env)
    try:

        def child() -> str:
            assert proc.poll() is None, "the command exited before its child started"
            return pidfile.read_text() if pidfile.exists() else ""

        child_pid = int(until(child, timeout=20, what="the child to start"))
        proc.send_signal(signum)
        assert proc.wait(20) == 3  # the child's own exit status, passed through
        until(lambda: not _alive(child_pid), timeout=20, what="the child to end with the command")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.skipif(os.name != "posix", reason="signals as on POSIX")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_while_the_child_starts_reaches_it(signum):
    # The signal comes just before the child is started (Popen is wrapped to send it):
    # the command is already forwarding, so it neither dies nor leaves the child behind.
    parent = (
        "import os, subprocess, sys\n"
        "from hitl_nb._process import replace_or_forward\n"
        "real = subprocess.Popen\n"
        "def popen(*args, **kwargs):\n"
        f"    os.kill(os.getpid(), {int(signum)})\n"
        "    child = real(*args, **kwargs)\n"
        "    print(child.pid, flush=True)\n"
        "    return child\n"
        "subprocess.Popen = popen\n"
        "status = replace_or_forward([sys.executable, '-c', 'import time; time.sleep(60)'],"
        " replace=False)\n"
        "print(status, flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", parent], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    child_pid, status = (int(line) for line in done.stdout.split())
    assert status == -signum  # the child was stopped by the signal, and said so
    assert not _alive(child_pid)


@contextmanager
def _tutorials_running(tmp_path: Path, folder: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """``hitl-nb tutorials`` on ``folder``, as a script starts it: (process, base URL).

    Yields once JupyterLab answers; stops it and anything it left behind afterwards.
    """
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
    }
    command = [
        sys.executable,
        "-c",
        "import sys; from hitl_nb.cli import main; sys.exit(main())",
        "tutorials",
        "--dir",
        str(folder),
        "--",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={TOKEN}",
        f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
        f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
    ]
    base = f"http://127.0.0.1:{port}"
    with (tmp_path / "lab.log").open("w") as log:
        proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)

        def ready() -> bool:
            assert proc.poll() is None, (tmp_path / "lab.log").read_text()
            return httpx.get(f"{base}/api/status", headers=AUTH).status_code == 200

        try:
            until(
                ready,
                timeout=90,
                what="JupyterLab to answer",
                interval=0.3,
                ignore=httpx.TransportError,
                detail=(tmp_path / "lab.log").read_text,
            )
            yield proc, base
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pid in _orphans(folder):  # a failed run must not leave them behind either
                os.kill(pid, signal.SIGKILL)


TOKEN = "tutorials-test"
AUTH = {"Authorization": f"token {TOKEN}"}


@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="exec is POSIX")
@pytest.mark.skipif(importlib.util.find_spec("jupyterlab") is None, reason="needs JupyterLab")
def test_stopping_the_command_from_a_script_stops_jupyterlab(tmp_path):
    # A script starts `hitl-nb tutorials`, waits for JupyterLab to answer, then stops the
    # process it started. No JupyterLab may be left behind serving the notebooks.
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), folder / "00-x.ipynb")
    with _tutorials_running(tmp_path, folder) as (proc, base):
        # The process the script started is JupyterLab itself (exec), not a parent of it.
        cmdline = Path(f"/proc/{proc.pid}/cmdline")
        if cmdline.exists():
            assert b"jupyterlab" in cmdline.read_bytes()
        proc.terminate()
        proc.wait(30)
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{base}/api/status", headers=AUTH, timeout=2)
        assert _orphans(folder) == [], "JupyterLab processes left behind"


@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("jupyterlab") is None, reason="needs JupyterLab")
def test_the_command_opens_the_quickstart_and_prints_its_url(tmp_path):
    # What the newcomer meets: the URL printed in the terminal and the page "/" leads to
    # are the quickstart notebook, not the Launcher.
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in (tutorials.FIRST_TUTORIAL, "01-next.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(), folder / name)
    quickstart = f"/lab/tree/{tutorials.FIRST_TUTORIAL}"
    with _tutorials_running(tmp_path, folder) as (_proc, base):
        home = httpx.get(f"{base}/", headers=AUTH)
        assert home.status_code == 302
        assert home.headers["location"].rstrip("?") == quickstart  # tornado keeps the "?"
        page = httpx.get(f"{base}{quickstart}", headers=AUTH)
        assert page.status_code == 200 and "JupyterLab" in page.text
        # The server logs its URLs once it listens, just after /api/status answers.
        printed = until(
            lambda: _printed_urls(tmp_path / "lab.log", base),
            timeout=30,
            what="JupyterLab to print its URLs",
        )
    assert all(url.startswith(f"{base}{quickstart}?token=") for url in printed)


def _printed_urls(log: Path, base: str) -> list[str]:
    """The URLs on ``base`` the server printed for people to open."""
    return [w for w in log.read_text().split() if w.startswith(f"{base}/")]


def _orphans(folder: Path) -> list[int]:
    """Processes (other than zombies) whose command line names ``folder``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        pid = int(cmdline.parent.name)
        if str(folder).encode() in _readable(cmdline) and _alive(pid):
            found.append(pid)
    return found


def _readable(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def test_jupyterlab_opens_at_the_quickstart(tmp_path):
    (tmp_path / tutorials.FIRST_TUTORIAL).write_text("{}")
    command = tutorials.lab_command(tmp_path, [])
    # LabApp's, not ServerApp's: JupyterLab overwrites the server's with its own "/lab".
    assert f"--LabApp.default_url=/lab/tree/{tutorials.FIRST_TUTORIAL}" in command
    # A URL of the user's own wins; a folder without the quickstart opens as a folder.
    own = tutorials.lab_command(tmp_path, ["--LabApp.default_url=/lab/tree/x.ipynb"])
    assert sum("default_url" in arg for arg in own) == 1
    assert not any("default_url" in a for a in tutorials.lab_command(tmp_path / "none", []))


# --- the tutorial notebooks as files ----------------------------------------------------

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _cells(path: Path) -> list[dict]:
    return nbformat.read(path, as_version=4)["cells"]


def test_there_are_at_least_twelve_tutorials_numbered_in_order():
    numbers = [int(p.name[:2]) for p in NOTEBOOKS]
    assert len(numbers) >= 12 and numbers == list(range(len(numbers)))
    assert NOTEBOOKS[0].name == tutorials.FIRST_TUTORIAL


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_tutorial_is_saved_as_jupyter_writes_it(path):
    # Opening it in JupyterLab must not mark it modified: Jupyter's own kernelspec, the
    # kernel's language_info, no per-cell timing left by an executor.
    nb = nbformat.read(path, as_version=4)
    assert dict(nb.metadata["kernelspec"]) == KERNELSPEC
    assert nb.metadata["language_info"]["name"] == "python"
    assert all("execution" not in cell.metadata for cell in nb.cells)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_tutorial_is_checked_by_strict_nbval(path):
    cells = _cells(path)
    code = [c for c in cells if c["cell_type"] == "code"]
    # nbval compares only cells that ran: a cell saved without outputs checks nothing.
    assert all(c["execution_count"] is not None for c in code)
    # Markers are cell tags; a visible "# NBVAL_..." comment is noise for the student.
    assert not any("NBVAL_" in c["source"] for c in cells)
    assert all(
        tag.startswith("nbval-") and tag in {"nbval-ignore-output", "nbval-skip"}
        for c in cells
        for tag in c["metadata"].get("tags", [])
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_tutorial_cites_the_spec_and_starts_its_own_agent(path):
    cells = _cells(path)
    markdown = "\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")
    source = "\n".join(c["source"] for c in cells if c["cell_type"] == "code")
    assert "§" in markdown, "cite the spec sections the tutorial teaches"
    if "MockAgent" in source:
        assert "MockAgent(" in source and "port=" not in source  # port 0: a free port


def test_the_readme_lists_every_tutorial():
    readme = (ROOT / "README.md").read_text()
    missing = [p.name for p in NOTEBOOKS if f"notebooks/{p.name}" not in readme]
    assert missing == []


def test_a_tutorial_on_newer_frameworks_is_skipped_on_older_pythons_only():
    # The table names tutorials that exist; each is skipped below its Python, saying why,
    # and runs from it on. Every other tutorial runs on every Python the project claims.
    assert set(NEEDS_PYTHON) <= {p.name for p in NOTEBOOKS}
    assert skip_reason("17-framework-agents.ipynb", (3, 10)) == (
        "Pydantic AI 2, ADK 2.15 and the Agent Framework need Python 3.11 or later"
    )
    assert skip_reason("17-framework-agents.ipynb", (3, 11)) is None
    assert skip_reason("16-langgraph-agent.ipynb", (3, 10)) is None
