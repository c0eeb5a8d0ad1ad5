"""Hand the terminal to a long-running command (JupyterLab, Voila) without orphaning it.

On POSIX the calling process *becomes* the command (``os.execve``): same process id, so
a script or a service manager that stops the ``hitl-nb`` command stops the server
itself, and Ctrl-C reaches it directly. Where ``exec`` is not available (Windows), the
command runs as a child and SIGINT / SIGTERM / SIGBREAK are forwarded to it; the caller
waits for it and gets its exit status.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from types import FrameType
from typing import Any

__all__ = ["replace_or_forward"]


def replace_or_forward(
    command: list[str],
    *,
    env: Mapping[str, str] | None = None,
    replace: bool = os.name == "posix",
) -> int:
    """Become ``command`` (``replace``: POSIX ``exec``), or run it and forward stop signals.

    ``env``: the command's environment (default: this process's). Forwarding: SIGINT,
    SIGTERM (and SIGBREAK on Windows) received by this process are sent on to the child
    (one that comes while the child is being started, once it exists); the child's exit
    status is returned once it has stopped.
    """
    environ = dict(os.environ if env is None else env)
    if replace:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(command[0], command, environ)  # does not return
    names = ("SIGINT", "SIGTERM", "SIGBREAK")
    signals = [getattr(signal, n) for n in names if hasattr(signal, n)]
    child: subprocess.Popen[bytes] | None = None
    pending: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        if child is None:  # still starting: sent on once it exists
            pending.append(signum)
        else:  # send_signal skips a child that has already ended
            child.send_signal(signum)

    # The handlers go in before the child starts: a stop signal that came in between
    # would otherwise end this process and leave the child running.
    previous: dict[int, Any] = {}
    for signum in signals:
        previous[signum] = signal.signal(signum, forward)
    try:
        child = subprocess.Popen(command, env=environ)
        for signum in pending:
            child.send_signal(signum)
        while True:
            # Waits of a second: Python runs a signal's handler between bytecodes, so a
            # signal that came just before an endless wait's system call would not be
            # forwarded until the child ended by itself.
            try:
                return child.wait(timeout=1.0)
            except (subprocess.TimeoutExpired, KeyboardInterrupt):  # SIGINT: forwarded
                continue
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
