"""A test that hangs fails with its stack, and the servers its module started are still
stopped (pytest-timeout's signal method, and the teardown limit of conftest.py), also
under pytest-xdist."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

HANGING = """
import asyncio, threading, time
import pytest

@pytest.fixture(scope="module")
def server():
    yield
    with open("stopped", "w") as out:
        out.write("the module's server was stopped")

def test_hangs_in_a_sleep(server):
    time.sleep(600)

def test_hangs_on_a_thread(server):
    threading.Event().wait()

def test_hangs_in_an_event_loop(server):
    async def the_task_that_waits():
        await asyncio.Event().wait()

    asyncio.run(the_task_that_waits())

def test_after(server):
    pass
"""


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_hanging_test_fails_and_its_module_is_torn_down(tmp_path: Path, workers: str) -> None:
    (tmp_path / "test_hanging.py").write_text(HANGING)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "conftest",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-o",
            "timeout=2",
            "-n",
            workers,
            "--dist",
            "loadfile",
            "-q",
            "test_hanging.py",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout
    assert "3 failed, 1 passed" in out, out
    assert out.count("Failed: Timeout (>2.0s) from pytest-timeout") == 3, out
    assert "in test_hangs_in_a_sleep" in out or "time.sleep(600)" in out, out  # its stack
    # In an event loop the main thread only waits in select(): its tasks say where.
    assert "the_task_that_waits() running at" in out, out
    assert (tmp_path / "stopped").read_text() == "the module's server was stopped"
