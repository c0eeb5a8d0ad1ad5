"""Running the official A2A JavaScript SDK from the tests (tests/interop/js/), and other
pinned npm packages (JupyterHub's proxy, tests/hub/proxy/).

:func:`npm_workdir` installs a folder's pinned packages with ``npm ci`` into a cache
folder keyed by the lockfile's digest (``$HITL_NB_JS_CACHE`` or ``~/.cache/hitl-nb-js``),
once per lockfile; :func:`js_workdir` does it for the SDK and copies the scripts next to
them (ES modules resolve packages from
their own folder). Without node or npm the caller skips, except under ``CI=true``,
where that is a failure. :class:`NodeProcess` runs a long-lived script (an agent) that
prints ``listening on URL`` and stops when its stdin closes.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.until import until

SOURCE = Path(__file__).resolve().parents[1] / "interop" / "js"
FILES = ("package.json", "package-lock.json", "client.mjs", "agent.mjs", "answer.mjs")


def _missing(what: str, tests: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must provide {what} for {tests}", pytrace=False)
    pytest.skip(f"no {what}: {tests} need node (20+) and npm")


def js_workdir() -> Path:
    """A folder with the pinned @a2a-js/sdk installed and the scripts copied in."""
    work = npm_workdir(SOURCE, "the JavaScript SDK tests")
    for name in FILES[2:]:  # the scripts always come from this checkout
        shutil.copyfile(SOURCE / name, work / name)
    return work


def npm_workdir(source: Path, what: str) -> Path:
    """A folder with the packages pinned by ``source``'s package.json and lockfile
    installed (``npm ci``), once per lockfile; ``what`` names the tests that need it."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _missing("node" if node is None else "npm", what)
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True).stdout
    major = version.strip().lstrip("v").split(".")[0]
    if not major.isdigit() or int(major) < 20:
        _missing(f"node 20 or newer (found {version.strip() or '?'})", what)
    lock = (source / "package-lock.json").read_bytes()
    key = hashlib.sha256(lock + (source / "package.json").read_bytes()).hexdigest()[:16]
    root = Path(os.environ.get("HITL_NB_JS_CACHE") or Path.home() / ".cache" / "hitl-nb-js")
    work = root / key
    marker = work / ".installed"
    work.mkdir(parents=True, exist_ok=True)
    # One install at a time: pytest-xdist's workers (or two checkouts) may ask at once,
    # and two `npm ci` in one folder break each other. The lock goes with the process.
    with open(root / f"{key}.lock", "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        if not marker.exists():
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(source / name, work / name)
            done = subprocess.run(
                [str(npm), "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                raise RuntimeError(f"npm ci failed in {work}:\n{done.stdout}\n{done.stderr}")
            marker.write_text(key)
    return work


def run_node(work: Path, script: str, *args: str, timeout: float = 120) -> str:
    """Run ``node script args`` in ``work``; its stdout (stderr in the error)."""
    done = subprocess.run(
        ["node", script, *args], cwd=work, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise AssertionError(f"node {script} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


class NodeProcess:
    """``with NodeProcess(work, "agent.mjs") as agent: agent.url``."""

    def __init__(self, work: Path, script: str) -> None:
        self.work, self.script = work, script
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.stderr: list[str] = []
        self.stdout: list[str] = []
        self._drains: list[threading.Thread] = []

    def __enter__(self) -> NodeProcess:
        self.proc = subprocess.Popen(
            ["node", self.script],
            cwd=self.work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._start_drain(self.proc.stderr, self.stderr)
        self._start_drain(self.proc.stdout, self.stdout)
        proc = self.proc

        def listening() -> str | None:
            line = next((line for line in self.stdout if "listening on" in line), None)
            assert line is not None or proc.poll() is None, f"node {self.script} exited"
            return line

        try:
            line = until(
                listening,
                timeout=30,
                what=f"node {self.script} to listen",
                detail=lambda: "".join(self.stderr)[-2000:],
            )
        except BaseException:
            self.__exit__()
            raise
        self.url = line.rsplit(" ", 1)[-1].strip()
        return self

    def _start_drain(self, stream: Any, into: list[str]) -> None:
        thread = threading.Thread(target=self._drain, args=(stream, into), daemon=True)
        thread.start()
        self._drains.append(thread)

    @staticmethod
    def _drain(stream: Any, into: list[str]) -> None:
        for line in stream:
            into.append(line)
            del into[:-200]

    def __exit__(self, *exc: object) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()  # the agent stops when its stdin closes
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for thread in self._drains:
            thread.join(5)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()
