"""Tutorial notebooks that need a newer Python than the project's oldest.

The test extra installs Pydantic AI 2 and ADK 2.15 only from Python 3.11 on (their own
requirement), so a notebook built on them cannot run on 3.10. There it is skipped, saying
why, rather than failing at its first import: by the nbval items (conftest.py) and by
the browser test (tests/test_tutorials_browser.py), as tests/agent/conftest.py skips the
bridges' own tests. The check is the Python's version, not whether the import works: on
3.11 and later a missing framework is a broken install, and the notebook fails saying so.
"""

from __future__ import annotations

import sys

#: Notebook name: (the oldest Python it runs on, why).
NEEDS_PYTHON: dict[str, tuple[tuple[int, int], str]] = {
    "17-framework-agents.ipynb": (
        (3, 11),
        "Pydantic AI 2, ADK 2.15 and the Agent Framework need Python 3.11 or later",
    ),
}


def skip_reason(notebook: str, python: tuple[int, int] | None = None) -> str | None:
    """Why the tutorial ``notebook`` (a file name) cannot run on this Python (or on
    ``python``, a version as ``(3, 10)``), or None when it can."""
    oldest, why = NEEDS_PYTHON.get(notebook, ((0, 0), ""))
    return why if (python or sys.version_info[:2]) < oldest else None
