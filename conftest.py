"""Repository-wide pytest setup: the notebooks use the nbval sanitizer hitl-nb ships.

nbval resolves ``--nbval-sanitize-with`` against the current directory, not the rootdir,
so the (absolute) path is set here, where it works from any directory. The file is the
one users get (:func:`hitl_nb.testing.sanitize_file`): one copy, tested by our notebooks.
"""

import pytest

from hitl_nb.testing import sanitize_file


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "nbval_sanitize_with", "missing") is None:
        config.option.nbval_sanitize_with = str(sanitize_file())
