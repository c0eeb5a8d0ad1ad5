"""Run the official A2A TCK (a2aproject/a2a-tck, branch 1.0-dev) against hitl-nb's agents.

Not part of the test suite: it needs a checkout of the TCK, which is not vendored here.
From the repository root::

    git clone -b 1.0-dev https://github.com/a2aproject/a2a-tck /tmp/a2a-tck
    python benchmarks/run_tck.py /tmp/a2a-tck [--level must] [--transport jsonrpc,http_json]

What it does:

1. Makes a throwaway virtual environment for the TCK (default ``/tmp/a2a-tck-venv``;
   ``--venv`` to choose) and installs the checkout's Python dependencies into it, never
   into this project's environment.
2. Starts the agent on 127.0.0.1 (a free port) with this interpreter, so the code under
   test is whatever ``hitl_nb`` this interpreter imports (set ``PYTHONPATH`` to measure
   another checkout). ``--agent`` (default ``mock``) names one or more, each run in turn:
   ``mock`` (``hitl-nb mock-agent``), ``sdk`` (a bare agent on the official a2a-sdk,
   ``benchmarks/_sdk_tck_agent.py``) and ``sdk-hitl`` (the same agent with
   ``hitl_nb.agent``): the last two side by side tell what the extension changes.
   The framework agents of ``benchmarks/_bridge_tck_agents.py``, each driven by its
   framework's test model, on a hitl-nb bridge: ``pydantic``, ``openai``, ``adk``,
   ``langgraph``, ``maf`` (Microsoft Agent Framework); and their peers (:data:`PEERS`):
   the framework's own A2A server where it has one, ``pydantic-bare`` (fasta2a) and
   ``adk-bare`` (ADK's ``to_a2a``), else ``sdk-bare``, a bare a2a-sdk agent acting as
   the models do. These declare no push
   notifications and run once per transport whatever ``--push`` says. With ``grpc`` in
   ``--transport`` they serve gRPC too (the bridges with ``grpc_port=0``; ``sdk-bare``
   with the SDK's servicer; fasta2a and ADK's ``to_a2a`` have no gRPC). A transport the
   agent's card does not list is reported as not served.
3. Runs the TCK once per transport (``--transport``, default both of the mock agent's:
   ``jsonrpc`` and ``http_json``), ``-m must`` unless ``--level all``, with
   ``TCK_STREAMING_TIMEOUT`` (default 2.0 s) in its environment.
4. With ``--push on,off`` (the default), starts a second agent with ``--no-push`` and
   runs the TCK's push tests (``-k push``) against it per transport: the TCK's tests of
   an agent without push notifications (CORE-CAP-001, -32003, HTTP 400) apply only there.
5. Prints, per run, the tests passed out of those that apply, per TCK category (its
   test module), the failures, and the tests the TCK skipped because it could not set
   them up on this agent (those count against it); ``--json PATH`` writes the same as
   JSON, with the TCK's commit when the checkout is a git one. The JUnit files stay
   under ``--reports`` (default ``/tmp/a2a-tck-reports``). When a bridge and its peer
   ran together, the tests failed or not set up on one side only, per transport.

The mock agent must answer the TCK's messageId prefixes as its SUT contract says
(``tck-*``, ``test-resubscribe-message-id*``): see ``hitl_nb/mock_agent/README.md``,
which also lists the TCK's own defects found this way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402

TRANSPORTS = ("jsonrpc", "http_json")
PUSH_MODES = ("on", "off")


def ensure_venv(venv: Path, tck: Path) -> Path:
    """The TCK's Python, installing its dependencies on first use."""
    python = venv / "bin" / "python"
    marker = venv / ".hitl-nb-tck-installed"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if not marker.exists():
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(tck)], check=True)
        marker.write_text(str(tck))
    return python


class MockAgentProcess:
    """``hitl-nb mock-agent`` in a child process; ``url`` once it listens (a subclass
    gives another agent's ``command``)."""

    def __init__(self, *, push: bool = True) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.push = push

    @property
    def command(self) -> list[str]:
        """How the agent is started."""
        code = "from hitl_nb.cli import main; main()"
        cmd = [sys.executable, "-c", code, "mock-agent", "--host", "127.0.0.1", "--port", "0"]
        return cmd if self.push else [*cmd, "--no-push"]

    def __enter__(self) -> MockAgentProcess:
        cmd = self.command
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 180  # a framework's imports on a loaded machine
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if "listening on" in line:
                self.url = line.rsplit(" ", 1)[-1].strip().rstrip("/")
                return self
        self.__exit__()
        raise RuntimeError("the mock agent did not start")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class SdkAgentProcess(MockAgentProcess):
    """The a2a-sdk agent of ``benchmarks/_sdk_tck_agent.py``, bare or (``hitl``) with
    hitl_nb.agent, in a child process."""

    def __init__(self, *, hitl: bool, push: bool = True) -> None:
        super().__init__(push=push)
        self.hitl = hitl

    @property
    def command(self) -> list[str]:
        """How the agent is started."""
        cmd = [sys.executable, str(ROOT / "benchmarks" / "_sdk_tck_agent.py")]
        cmd += ["--hitl"] if self.hitl else []
        return cmd if self.push else [*cmd, "--no-push"]


class FrameworkAgentProcess(MockAgentProcess):
    """A framework's agent of ``benchmarks/_bridge_tck_agents.py`` (``name``), on its
    hitl-nb bridge or on the framework's own A2A server, in a child process. None of
    them offers push notifications: they run once, as they are."""

    def __init__(self, name: str, *, grpc: bool = False) -> None:
        super().__init__(push=True)
        self.name = name
        self.grpc = grpc

    @property
    def command(self) -> list[str]:
        """How the agent is started."""
        cmd = [sys.executable, str(ROOT / "benchmarks" / "_bridge_tck_agents.py"), self.name]
        return [*cmd, "--grpc"] if self.grpc else cmd


#: The framework agents (bridge, then the framework's own server where it has one).
FRAMEWORK_AGENTS = (
    "pydantic",
    "pydantic-bare",
    "openai",
    "adk",
    "adk-bare",
    "langgraph",
    "maf",
    "sdk-bare",
)
AGENTS = ("mock", "sdk", "sdk-hitl", *FRAMEWORK_AGENTS)
#: Each bridge's peer: the framework's own A2A server, or, for the frameworks that have
#: none, a bare a2a-sdk agent acting as their models do.
PEERS = {
    "pydantic": "pydantic-bare",
    "adk": "adk-bare",
    "openai": "sdk-bare",
    "langgraph": "sdk-bare",
    "maf": "sdk-bare",
    "sdk-hitl": "sdk",
}


def agent_process(name: str, *, push: bool, grpc: bool = False) -> MockAgentProcess:
    """The process of the agent named ``name`` (one of :data:`AGENTS`; ``grpc``: a
    framework agent serving gRPC too, where it can)."""
    if name == "mock":
        return MockAgentProcess(push=push)
    if name in FRAMEWORK_AGENTS:
        return FrameworkAgentProcess(name, grpc=grpc)
    return SdkAgentProcess(hitl=name == "sdk-hitl", push=push)


#: Skip messages that mean "does not apply to this agent or transport".
_NOT_APPLICABLE = (
    "not configured",  # another transport
    "does not support push notifications",
    "Agent supports push notifications",  # tests of agents without push (CORE-CAP-001...)
    "does not declare capabilities for",  # e.g. extendedAgentCard
    "does not declare urn:a2a:tck:required-extension",
    "Agent supports streaming",  # tests of agents that do not stream
    "No requirements at this level",
)


def category(classname: str) -> str:
    """The TCK category of a test: its module under tests/compatibility, e.g.
    ``core_operations/push_notifications`` or ``jsonrpc/error_codes``."""
    parts = classname.split(".")
    if parts[:2] == ["tests", "compatibility"]:
        parts = parts[2:]
    modules = [p for p in parts if not p[:1].isupper()]  # drop the class name
    return "/".join(p.removeprefix("test_") for p in modules) or classname


def tally(junit: Path) -> dict[str, Any]:
    """Counts and failed test ids of a JUnit file, in all and per category.

    A skip is ``not_applicable`` (another transport, a capability the agent does not
    declare, or one it does where the test is for agents without it) or
    ``prerequisite`` (the TCK could not set the test up on this agent: a task that did
    not reach the state it needed...), which counts against the agent:
    ``applicable`` = passed + failed + prerequisite.
    """
    counts = {"passed": 0, "failed": 0, "prerequisite": 0, "not_applicable": 0, "xfailed": 0}
    categories: dict[str, dict[str, int]] = {}
    failed: list[str] = []
    unmet: list[str] = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                text = f"{child.get('type', '')} {child.get('message', '')}"
                if "xfail" in text:
                    outcome = "xfailed"
                elif any(marker in text for marker in _NOT_APPLICABLE):
                    outcome = "not_applicable"
                else:
                    outcome = "prerequisite"
                    unmet.append(f"{name}: {child.get('message', '')[:160]}")
        counts[outcome] += 1
        per = categories.setdefault(category(case.get("classname", "")), dict.fromkeys(counts, 0))
        per[outcome] += 1
        if outcome == "failed":
            failed.append(name)
    applicable = counts["passed"] + counts["failed"] + counts["prerequisite"]
    return {
        **counts,
        "applicable": applicable,
        "categories": dict(sorted(categories.items())),
        "failures": failed,
        "unmet": unmet,
    }


#: The TCK's transport names by the card's ``protocolBinding``.
BINDINGS = {"JSONRPC": "jsonrpc", "HTTP+JSON": "http_json", "GRPC": "grpc"}


def served_transports(url: str) -> set[str]:
    """The TCK transports the agent at ``url`` lists in its card."""
    with urllib.request.urlopen(f"{url}/.well-known/agent-card.json", timeout=30) as answer:
        card = json.load(answer)
    bindings = {i.get("protocolBinding") for i in card.get("supportedInterfaces", [])}
    return {BINDINGS[b] for b in bindings if b in BINDINGS}


def tck_command(url: str, transport: str, level: str, junit: Path, only: str | None) -> list[str]:
    """The pytest command line of one TCK run (``only``: a ``-k`` expression)."""
    cmd = [
        "-m",
        "pytest",
        "tests/compatibility/",
        f"--sut-host={url}",
        f"--transport={transport}",
        "--tb=line",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={junit}",
    ]
    if level != "all":
        cmd += ["-m", level]
    if only:
        cmd += ["-k", only]
    return cmd


def tck_commit(tck: Path) -> str | None:
    """The commit of a git checkout of the TCK (None for a plain copy)."""
    done = subprocess.run(
        ["git", "-C", str(tck), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else None


def run_transport(
    python: Path,
    tck: Path,
    url: str,
    transport: str,
    level: str,
    reports: Path,
    timeout: str,
    *,
    push: bool = True,
) -> dict[str, Any]:
    """One TCK run on one transport (all tests, or only the push tests when the agent
    has push off); its tally."""
    junit = reports / f"junit-{transport}-{level}{'' if push else '-no-push'}.xml"
    cmd = [str(python), *tck_command(url, transport, level, junit, None if push else "push")]
    env = {**os.environ, "TCK_STREAMING_TIMEOUT": timeout}
    env.pop("PYTHONPATH", None)  # the TCK's own interpreter, not this project's path
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=tck, env=env, capture_output=True, text=True)
    result: dict[str, Any] = (
        tally(junit) if junit.exists() else {"error": done.stdout[-2000:] + done.stderr}
    )
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def compare(figures: dict[str, Any], agents: list[str]) -> dict[str, dict[str, list[str]]]:
    """Per bridge whose peer (:data:`PEERS`) ran too, per transport both serve: the tests
    failed or not set up on one side only."""
    out: dict[str, dict[str, list[str]]] = {}
    for bridge, peer in PEERS.items():
        if bridge not in agents or peer not in agents:
            continue
        for key, ours in figures.items():
            if not key.startswith(f"{bridge}: "):
                continue
            theirs = figures.get(f"{peer}: " + key.removeprefix(f"{bridge}: "), {})
            if "failures" not in ours or "failures" not in theirs:
                continue

            def bad(result: dict[str, Any]) -> set[str]:
                unmet = {u.split(": ", 1)[0] for u in result["unmet"]}
                return set(result["failures"]) | unmet

            out[f"{key} against {peer}"] = {
                "only the bridge": sorted(bad(ours) - bad(theirs)),
                "only the peer": sorted(bad(theirs) - bad(ours)),
            }
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run the TCK per transport, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tck", type=Path, help="a checkout of a2aproject/a2a-tck (1.0-dev)")
    parser.add_argument("--venv", type=Path, default=Path("/tmp/a2a-tck-venv"))
    parser.add_argument("--reports", type=Path, default=Path("/tmp/a2a-tck-reports"))
    parser.add_argument("--agent", default="mock", help=f"one or more of {', '.join(AGENTS)}")
    parser.add_argument("--transport", default=",".join(TRANSPORTS))
    parser.add_argument(
        "--push", default=",".join(PUSH_MODES), help="on: the agent as it is; off: --no-push"
    )
    parser.add_argument("--level", choices=["must", "should", "may", "all"], default="must")
    parser.add_argument("--streaming-timeout", default="2.0")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    tck = args.tck.resolve()
    if not (tck / "tests" / "compatibility").is_dir():
        parser.error(f"{tck} is not an a2a-tck checkout (no tests/compatibility)")
    python = ensure_venv(args.venv, tck)
    for name in args.agent.split(","):
        (args.reports / name).mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {}
    agents = args.agent.split(",")
    for name in agents:
        if name not in AGENTS:
            parser.error(f"--agent takes {', '.join(AGENTS)}, not {name!r}")
    modes = args.push.split(",")
    for mode in modes:
        if mode not in PUSH_MODES:
            parser.error(f"--push takes {' and/or '.join(PUSH_MODES)}, not {mode!r}")
    runs = [(n, m) for n in agents for m in (["on"] if n in FRAMEWORK_AGENTS else modes)]
    for name, mode in runs:
        grpc = "grpc" in args.transport.split(",")
        with agent_process(name, push=mode == "on", grpc=grpc) as agent:
            served = served_transports(agent.url)
            for transport in args.transport.split(","):
                key = transport if mode == "on" else f"{transport} (push off)"
                key = key if len(agents) == 1 else f"{name}: {key}"
                if transport not in served:
                    figures[key] = {"not_served": True}
                    continue
                figures[key] = run_transport(
                    python,
                    tck,
                    agent.url,
                    transport,
                    args.level,
                    args.reports / name,
                    args.streaming_timeout,
                    push=mode == "on",
                )
    commit = tck_commit(tck)
    print(f"A2A TCK at {tck} (commit {commit or 'unknown: not a git checkout'})")
    for run, result in figures.items():
        if result.get("not_served"):
            print(f"{run}: not served (the agent's card lists no such interface)")
            continue
        if "error" in result:
            print(f"{run}: the TCK did not run:\n{result['error']}")
            continue
        print(
            f"{run} ({args.level}): {result['passed']}/{result['applicable']} applicable "
            f"passed, {result['failed']} failed, {result['prerequisite']} not set up "
            f"(skipped by the TCK), {result['not_applicable']} not applicable, "
            f"{result['xfailed']} xfailed ({result['seconds']} s)"
        )
        for name, c in result["categories"].items():
            if c["passed"] + c["failed"] + c["prerequisite"]:
                print(
                    f"    {name}: {c['passed']} passed, {c['failed']} failed, "
                    f"{c['prerequisite']} not set up, {c['not_applicable']} not applicable"
                )
        for name in result["failures"]:
            print(f"    FAILED {name}")
        for name in result["unmet"]:
            print(f"    NOT SET UP {name}")
    comparisons = compare(figures, agents)
    for key, diff in comparisons.items():
        print(f"{key}:")
        for side in ("only the bridge", "only the peer"):
            for name in diff[side]:
                print(f"    {side}: {name}")
    if args.json:
        written = {"tck_commit": commit, **figures, "comparisons": comparisons}
        args.json.write_text(json.dumps(written, indent=2) + "\n")
    clean = all(
        r.get("not_served") or (r.get("failed") == 0 and r.get("prerequisite") == 0)
        for r in figures.values()
    )
    return 0 if clean else 1


if __name__ == "__main__":
    end_on_sigterm()
    sys.exit(main())
