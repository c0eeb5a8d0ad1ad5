"""The nbval sanitizer shipped with hitl-nb: what changes between runs, made equal.

nbval compares each cell's fresh outputs with the stored ones after replacing every
``regex`` of the sanitize file by its ``replace``. Notebooks that talk to an agent print
values that differ on every run: UUIDs (task, prompt and message ids), RFC 3339
timestamps, loopback ports (the mock agent listens on port 0), durations and object
addresses. The file lives in the package (``nbval-sanitize.cfg`` next to this module),
so ``pip install hitl-nb`` is enough to use it.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

__all__ = ["sanitize", "sanitize_file", "sanitize_patterns", "write_sanitize_file"]

_FILE = Path(__file__).resolve().parent / "nbval-sanitize.cfg"
# The pair syntax nbval itself reads (nbval.plugin.get_sanitize_patterns).
_PAIR = re.compile(r"^regex: (.*)$\n^replace: (.*)$", re.MULTILINE)


def sanitize_file() -> Path:
    """The absolute path of the shipped sanitize file.

    Absolute on purpose: nbval resolves ``--nbval-sanitize-with`` against the current
    directory, not pytest's rootdir.
    """
    return _FILE


def sanitize_patterns() -> list[tuple[str, str]]:
    """The ``(regex, replace)`` pairs of the sanitize file, in the order nbval applies them."""
    return [(regex, replace) for regex, replace in _PAIR.findall(_FILE.read_text("utf-8"))]


def sanitize(text: str) -> str:
    """``text`` as nbval sees it after sanitizing (to check an output by hand)."""
    for regex, replace in sanitize_patterns():
        text = re.sub(regex, replace, text)
    return text


def write_sanitize_file(destination: str | os.PathLike[str]) -> Path:
    """Copy the sanitize file to ``destination`` (a file, or a folder to put it in).

    Returns the path written. Use it to commit the file next to your notebooks, or to
    extend it with patterns of your own.
    """
    target = Path(destination)
    if target.is_dir():
        target = target / _FILE.name
    shutil.copyfile(_FILE, target)
    return target
