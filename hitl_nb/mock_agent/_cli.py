"""``hitl-nb mock-agent``: its options, and serving the bundled agent in the foreground
until Ctrl-C or SIGTERM (:func:`~hitl_nb.mock_agent._run.serve`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from hitl_nb.mock_agent._faults import FAULT_NAMES
from hitl_nb.mock_agent._run import MockAgent, serve
from hitl_nb.mock_agent._scenarios import DEADLINE_POLICIES

__all__ = ["add_cli_arguments", "agent_from_cli", "register_cli", "run_cli"]


def register_cli(sub: Any) -> None:
    """Add the ``mock-agent`` subcommand to the ``hitl-nb`` subparsers."""
    parser = sub.add_parser(
        "mock-agent",
        help="run the bundled A2A mock agent in the foreground",
        description="Serve the hitl-prompt/v1 mock agent (A2A 1.0 and 0.3, JSON-RPC and "
        "HTTP+JSON) until Ctrl-C / SIGTERM. Prints its URL on the first line.",
    )
    add_cli_arguments(parser)
    parser.set_defaults(func=run_cli)


def add_cli_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``hitl-nb mock-agent``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=0, help="port (0: any free port)")
    parser.add_argument("--store", metavar="PATH", help="SQLite file that survives restarts")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help="turn on a fault mode (repeatable): " + ", ".join(FAULT_NAMES),
    )
    parser.add_argument("--deadline-seconds", type=float, default=30.0)
    parser.add_argument("--on-deadline", choices=DEADLINE_POLICIES, default="keep-open")
    parser.add_argument(
        "--no-push",
        dest="push_notifications",
        action="store_false",
        help="no push notifications: the card says so and the push methods are refused",
    )


def agent_from_cli(args: argparse.Namespace) -> MockAgent:
    """The (not yet started) agent ``hitl-nb mock-agent`` options describe.

    Raises ValueError for options that do not make an agent (an unknown fault...).
    """
    return MockAgent(
        host=args.host,
        port=args.port,
        store=args.store,
        faults=args.fault,
        deadline_seconds=args.deadline_seconds,
        on_deadline=args.on_deadline,
        push_notifications=args.push_notifications,
    )


def run_cli(args: argparse.Namespace) -> int:
    """Run ``hitl-nb mock-agent`` in the foreground; 0 on a clean stop, 2 on bad options."""
    try:
        agent = agent_from_cli(args)
    except ValueError as exc:
        print(f"hitl-nb mock-agent: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(agent))
    except (OSError, ValueError) as exc:
        print(f"hitl-nb mock-agent: {exc}", file=sys.stderr)
        return 1
    return 0
