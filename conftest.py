"""Repository-wide pytest setup: the notebooks' nbval sanitizer, by absolute path.

nbval resolves ``--nbval-sanitize-with`` against the current directory, not the rootdir,
so the path is set here, where it works from any directory.
"""

from pathlib import Path

import pytest

SANITIZE = Path(__file__).parent / "notebooks" / "nbval-sanitize.cfg"


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "nbval_sanitize_with", "missing") is None:
        config.option.nbval_sanitize_with = str(SANITIZE)
