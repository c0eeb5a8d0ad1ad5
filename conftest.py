"""Repository-wide pytest setup: the notebooks use the nbval sanitizer hitl-nb ships, the
tutorial notebooks' cells are ``kernel`` tests, and the costly files run first.

nbval resolves ``--nbval-sanitize-with`` against the current directory, not the rootdir,
so the (absolute) path is set here, where it works from any directory. The file is the
one users get (:func:`hitl_nb.testing.sanitize_file`): one copy, tested by our notebooks.
"""

from pathlib import Path

import pytest

from hitl_nb.testing import sanitize_file

# The order files are taken in: the browser files, then those starting kernels or
# servers, then the slow ones, then the hypothesis ones, then the rest (whose many short
# tests even out the end). A file ranks by its costliest test.
_RANK = ("browser", "kernel", "slow", "property")


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "nbval_sanitize_with", "missing") is None:
        config.option.nbval_sanitize_with = str(sanitize_file())


def _rank(item: pytest.Item) -> int:
    return next((i for i, name in enumerate(_RANK) if item.get_closest_marker(name)), len(_RANK))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.suffix == ".ipynb":  # nbval runs every notebook in its own kernel
            item.add_marker(pytest.mark.kernel)
    # Under pytest-xdist (--dist loadfile) a worker takes a file at a time, in this order:
    # the longest files first, so no worker is left with one at the end while the other
    # idles. A file moves whole (its module-scoped servers start once); order within a
    # file, and among files of one rank, is kept.
    files: dict[Path, int] = {}
    for item in items:
        files[item.path] = min(files.get(item.path, len(_RANK)), _rank(item))
    first = {path: index for index, path in enumerate(files)}
    items.sort(key=lambda item: (files[item.path], first[item.path]))
