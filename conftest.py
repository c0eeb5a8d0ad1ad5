"""Repository-wide pytest setup: the notebooks use the nbval sanitizer hitl-nb ships, the
tutorial notebooks' cells are ``kernel`` and ``tutorial`` tests, two workers run a core,
the costly files run first, and a test that hangs ends.

nbval resolves ``--nbval-sanitize-with`` against the current directory, not the rootdir,
so the (absolute) path is set here, where it works from any directory. The file is the
one users get (:func:`hitl_nb.testing.sanitize_file`): one copy, tested by our notebooks.
"""

import asyncio
import faulthandler
import os
import signal
import sys
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.testing import sanitize_file
from hitl_nb.testing._nbval_kernels import kernels_on_unix_sockets
from tests.helpers.tutorials import skip_reason

# The order files are taken in: the browser files, then those starting kernels or
# servers, then the slow ones, then the hypothesis ones, then the rest (whose many short
# tests even out the end). A file ranks by its costliest test.
_RANK = ("browser", "kernel", "slow", "property")


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "nbval_sanitize_with", "missing") is None:
        config.option.nbval_sanitize_with = str(sanitize_file())
    # Every notebook's kernel listens on Unix sockets: a server another test starts on
    # port 0 cannot take its ports (hitl_nb/testing/_nbval_kernels.py says how).
    if config.pluginmanager.hasplugin("nbval") and not kernels_on_unix_sockets(config):
        raise RuntimeError(
            "nbval's kernels could not be put on Unix sockets (see why in "
            "hitl_nb/testing/_nbval_kernels.py)"
        )


# Workers for ``-n auto``: two a core. Half of a worker's time is spent waiting on what
# its tests start (a browser drawing, a hub or a kernel starting, a deadline passing), so
# one worker a core leaves the cores half idle (the suite used 550 CPU seconds in 600 s on
# two cores). PYTEST_XDIST_AUTO_NUM_WORKERS still sets the number, as pytest-xdist says:
# with it set, this hook leaves the answer to pytest-xdist's own, which reads it.
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 * (cores or 1)


def _rank(item: pytest.Item) -> int:
    return next((i for i, name in enumerate(_RANK) if item.get_closest_marker(name)), len(_RANK))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.suffix == ".ipynb":  # nbval runs every notebook in its own kernel
            item.add_marker(pytest.mark.kernel)
            item.add_marker(pytest.mark.tutorial)
            # A tutorial on frameworks this Python cannot install is skipped, saying why.
            reason = skip_reason(item.path.name)
            if reason is not None:
                item.add_marker(pytest.mark.skip(reason=reason))
    # Under pytest-xdist (--dist loadfile) a worker takes a file at a time, in this order:
    # the longest files first, so no worker is left with one at the end while the other
    # idles. A file moves whole (its module-scoped servers start once); order within a
    # file, and among files of one rank, is kept.
    files: dict[Path, int] = {}
    for item in items:
        files[item.path] = min(files.get(item.path, len(_RANK)), _rank(item))
    first = {path: index for index, path in enumerate(files)}
    items.sort(key=lambda item: (files[item.path], first[item.path]))


# A test that hangs fails. pytest-timeout (``timeout`` in pyproject) raises in the test
# after its limit with the signal method: the test fails with its stack, its fixtures
# (servers, kernels, hubs, browsers) are stopped by their own teardown, and the worker
# goes on with the next test. pytest-timeout disarms once a test has failed, so a
# teardown after a failure gets a limit of its own here (each finalizer that hangs is
# interrupted in turn). Should the process still not come back (a call that never
# returns to Python), it ends itself, with every thread's stack on stderr: pytest-xdist
# reports the test as failed ("worker crashed") and starts a new worker.
_TEARDOWN_LIMIT = 120.0
_LAST_RESORT = 300.0
_LAST_RESORT_KEY = pytest.StashKey[threading.Timer]()


@pytest.hookimpl(wrapper=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> Generator[None, object, object]:
    timer = threading.Timer(settings.timeout + _LAST_RESORT, _end_the_process, (item,))
    timer.name = f"last resort for {item.nodeid}"
    timer.daemon = True
    item.stash[_LAST_RESORT_KEY] = timer
    timer.start()
    armed = yield  # pytest-timeout arms its own timer
    handler = signal.getsignal(signal.SIGALRM)
    if callable(handler) and threading.current_thread() is threading.main_thread():
        # A test that hangs in an event loop shows the loop idle in select(): what each
        # of its tasks awaits is the stack that says why.
        def with_tasks(signum: int, frame: Any) -> None:
            __tracebackhide__ = True
            _print_tasks()
            handler(signum, frame)

        signal.signal(signal.SIGALRM, with_tasks)
    return armed


def _print_tasks() -> None:
    loop = asyncio._get_running_loop()
    if loop is None:
        return
    for task in asyncio.all_tasks(loop):
        print(f"~~~~~ asyncio task {task.get_name()}: {task.get_coro()!r}", file=sys.stdout)
        task.print_stack(file=sys.stdout)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    try:
        return (yield)
    finally:  # setup, call and teardown are over
        timer = item.stash.get(_LAST_RESORT_KEY, None)
        if timer is not None:
            timer.cancel()
            del item.stash[_LAST_RESORT_KEY]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    armed = (
        _LAST_RESORT_KEY in item.stash
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0  # pytest-timeout disarmed
    )
    if armed:

        def interrupt(signum: int, frame: object) -> None:
            signal.setitimer(signal.ITIMER_REAL, _TEARDOWN_LIMIT)  # for the next finalizer
            pytest.fail(f"Teardown did not end within {_TEARDOWN_LIMIT:g} s")

        previous = signal.signal(signal.SIGALRM, interrupt)
        signal.setitimer(signal.ITIMER_REAL, _TEARDOWN_LIMIT)
    try:
        return (yield)
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _end_the_process(item: pytest.Item) -> None:
    capture = item.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    sys.stderr.write(f"\n{item.nodeid} did not end; ending this process. The stacks:\n")
    sys.stderr.flush()
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    os._exit(1)
