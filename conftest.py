"""Repository-wide pytest setup: the notebooks use the nbval sanitizer hitl-nb ships, and
the tutorial notebooks' cells are ``kernel`` tests.

nbval resolves ``--nbval-sanitize-with`` against the current directory, not the rootdir,
so the (absolute) path is set here, where it works from any directory. The file is the
one users get (:func:`hitl_nb.testing.sanitize_file`): one copy, tested by our notebooks.
"""

import pytest

from hitl_nb.testing import sanitize_file


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "nbval_sanitize_with", "missing") is None:
        config.option.nbval_sanitize_with = str(sanitize_file())


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.suffix == ".ipynb":  # nbval runs every notebook in its own kernel
            item.add_marker(pytest.mark.kernel)
