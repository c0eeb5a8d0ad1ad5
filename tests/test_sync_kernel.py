"""The sync runner inside a real ipykernel, cells queued at once ("Run All").

The control case shows the test can fail: ``nest_asyncio.apply()`` + ``asyncio.run()``
in one cell makes the kernel lose a cell queued behind it (ipykernel >= 7.1).
"""

from __future__ import annotations

from collections.abc import Iterator

import ipykernel
import pytest
from jupyter_client.blocking.client import BlockingKernelClient

from tests.helpers.kernel import kernel, run_queued

pytestmark = [pytest.mark.slow, pytest.mark.kernel]


@pytest.fixture(scope="module")
def kc() -> Iterator[BlockingKernelClient]:
    with kernel() as client:
        yield client


RUNNER_CELL = """
import asyncio
from hitl_nb._sync import LoopThread, run_sync

async def work(x):
    await asyncio.sleep(0.05)
    return x * 2

with LoopThread() as runner:
    print("loop-thread", runner.run(work(21)))
print("run-sync", run_sync(work(4)))
"""


def test_every_queued_cell_replies_ok(kc: BlockingKernelClient) -> None:
    cells = [
        "import time; time.sleep(0.3)\nprint('first')",
        RUNNER_CELL,
        "print('third')",
        "x = 3\nprint('fourth', x)",
    ]
    results = run_queued(kc, cells)
    assert [r.status for r in results] == ["ok"] * 4, [r.error for r in results]
    assert results[0].stdout == "first\n"
    assert results[1].stdout == "loop-thread 42\nrun-sync 8\n"
    assert results[2].stdout == "third\n"
    assert results[3].stdout == "fourth 3\n"


FACADE_CELL = """
from hitl_nb.client import SyncHitlClient, PromptEvent
from hitl_nb.mock_agent import MockAgent

with MockAgent() as agent, SyncHitlClient(agent.url, call_timeout=20) as client:
    events = list(client.stream("approval"))
    prompt = events[-1]
    assert isinstance(prompt, PromptEvent), events
    task = client.respond(prompt.task_id, prompt.prompt_id, {"approve": True})
    print("answered", task.status.state.value != "input_required")
"""


def test_cells_queued_behind_the_sync_client_all_run(kc: BlockingKernelClient) -> None:
    cells = ["import time; time.sleep(0.3)", FACADE_CELL, "print('after')", "print('last')"]
    results = run_queued(kc, cells, timeout=60)
    assert [r.status for r in results] == ["ok"] * 4, [r.error for r in results]
    assert results[1].stdout == "answered True\n"
    assert results[2].stdout == "after\n" and results[3].stdout == "last\n"


NEST_ASYNCIO_CELL = """
import asyncio, nest_asyncio
nest_asyncio.apply()
print(asyncio.run(asyncio.sleep(0, result="nested")))
"""


@pytest.mark.skipif(
    ipykernel.version_info < (7, 1), reason="the cell loss appeared in ipykernel 7.1"
)
def test_control_nest_asyncio_loses_a_queued_cell() -> None:
    # The loss depends on how the queued requests interleave with the nested loop: it
    # showed in about 3 of 4 fresh kernels here, so allow a few tries. A try that loses
    # nothing is quick; one that loses a cell waits out the 3 s reply timeout.
    cells = ["import time; time.sleep(0.3)", NEST_ASYNCIO_CELL, "print(3)", "print(4)"]
    statuses: list[list[str | None]] = []
    for _ in range(8):
        with kernel() as client:  # fresh each time: nest_asyncio patches the loop for good
            statuses.append([r.status for r in run_queued(client, cells, 3)])
        if None in statuses[-1]:
            return
    pytest.fail(f"nest_asyncio lost no cell in {len(statuses)} kernels: {statuses}")
