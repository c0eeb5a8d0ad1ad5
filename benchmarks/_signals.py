"""A benchmark stopped with SIGTERM (``timeout``, ``kill``) cleans up as after Ctrl-C.

Python's default for SIGTERM ends the process at once: ``with`` blocks do not unwind, so
the hubs, PostgreSQL clusters, Jupyter servers and agents a benchmark started (in sessions
of their own, so a terminal's Ctrl-C does not reach them first) would keep running.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType


def _exit(signum: int, frame: FrameType | None) -> None:
    sys.exit(128 + signum)


def end_on_sigterm() -> None:
    """Make SIGTERM raise ``SystemExit`` in the main thread, so what ``main`` started is
    stopped by its own ``with`` blocks and ``finally`` clauses."""
    signal.signal(signal.SIGTERM, _exit)
