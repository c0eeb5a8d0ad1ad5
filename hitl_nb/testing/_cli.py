"""``hitl-nb nbval-sanitize``: where the shipped nbval sanitize file is, or a copy of it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._sanitize import sanitize_file, write_sanitize_file

__all__ = ["register_cli", "run_cli"]


def run_cli(args: argparse.Namespace) -> int:
    """Print the file's absolute path, or write a copy (``--write PATH``)."""
    if args.write is None:
        print(sanitize_file())
        return 0
    try:
        written = write_sanitize_file(args.write)
    except OSError as exc:
        print(f"hitl-nb nbval-sanitize: cannot write {args.write}: {exc}", file=sys.stderr)
        return 2
    print(written)
    return 0


def register_cli(sub: Any) -> None:
    """Add the ``nbval-sanitize`` subcommand to the ``hitl-nb`` subparsers."""
    parser = sub.add_parser(
        "nbval-sanitize",
        help="print the path of the nbval sanitize file for notebooks that talk to agents",
        description=(
            "Print the absolute path of the nbval sanitize file shipped with hitl-nb "
            "(UUIDs, timestamps, loopback ports, durations, addresses), for "
            'pytest --nbval --nbval-sanitize-with "$(hitl-nb nbval-sanitize)". '
            "With --write, copy it to a file or folder instead and print where."
        ),
    )
    parser.add_argument(
        "--write", metavar="PATH", default=None, help="copy the file to PATH (a file or folder)"
    )
    parser.set_defaults(func=run_cli)
