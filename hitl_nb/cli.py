"""The ``hitl-nb`` command: one subcommand per tool, each registered in :data:`COMMANDS`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

__all__ = ["COMMANDS", "build_parser", "main"]


def _mock_agent(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hitl_nb.mock_agent import register_cli

    register_cli(sub)


def _tutorials(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hitl_nb.tutorials import register

    register(sub)


def _conformance(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hitl_nb.conformance import register_cli

    register_cli(sub)


def _nbval_sanitize(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hitl_nb.testing import register_cli

    register_cli(sub)


def _inbox(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hitl_nb.server import register_cli

    register_cli(sub)


def _hub_service(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hitl_nb.hub import register_cli

    register_cli(sub)


def _audit(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hitl_nb.gateway import register_audit_cli

    register_audit_cli(sub)


#: Subcommand name -> what adds it to the parser (its ``func`` default runs it). Each
#: imports its own modules only when called: ``hitl-nb NAME`` loads NAME's alone.
COMMANDS: dict[str, Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = {
    "mock-agent": _mock_agent,
    "tutorials": _tutorials,
    "conformance": _conformance,
    "nbval-sanitize": _nbval_sanitize,
    "inbox": _inbox,
    "hub-service": _hub_service,
    "audit": _audit,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand, or only ``command``'s when it names
    one (then no other subcommand's modules are imported: a web server, the harness)."""
    parser = argparse.ArgumentParser(
        prog="hitl-nb", description="Tools for the A2A hitl-prompt/v1 extension."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = [COMMANDS[command]] if command in COMMANDS else COMMANDS.values()
    for register in chosen:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hitl-nb`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
