"""``hitl-nb mock-agent``: serve the bundled agent in the foreground until Ctrl-C."""

from __future__ import annotations

from typing import Any

from hitl_nb.mock_agent._run import add_cli_arguments, run_cli

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``mock-agent`` subcommand to the ``hitl-nb`` subparsers."""
    parser = sub.add_parser(
        "mock-agent",
        help="run the bundled A2A mock agent in the foreground",
        description="Serve the hitl-prompt/v1 mock agent (A2A 1.0 and 0.3, JSON-RPC and "
        "HTTP+JSON) until Ctrl-C / SIGTERM. Prints its URL on the first line.",
    )
    add_cli_arguments(parser)
    parser.set_defaults(func=run_cli)
