"""The ``hitl-nb`` command: one subcommand per tool, each registered in :data:`COMMANDS`."""

from __future__ import annotations

import argparse
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


#: Each entry adds one subcommand to the parser; its ``func`` default runs it.
COMMANDS: list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = [
    _mock_agent,
    _tutorials,
    _conformance,
    _nbval_sanitize,
    _inbox,
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="hitl-nb", description="Tools for the A2A hitl-prompt/v1 extension."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for register in COMMANDS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hitl-nb`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
