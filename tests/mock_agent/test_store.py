"""Durability: the SQLite store keeps tasks, open prompts, answered ids and the outbox,
also across kill -9 of a real process."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.mock_agent import MockAgent, SQLiteTaskStore
from tests.helpers.mock_agent_client import Collector, Wire, envelope_of, headers
from tests.helpers.until import until

ROOT = Path(__file__).resolve().parents[2]


def test_sqlite_store_round_trip(tmp_path: Path) -> None:
    store = SQLiteTaskStore(tmp_path / "s.db")
    store.commit(
        {"id": "t1", "x": 1}, [(1, {"task": {}}), (2, {"statusUpdate": {}})], [("p1", "t1", "open")]
    )
    store.commit({"id": "t1", "x": 2}, [(3, {"statusUpdate": {}})], [("p1", "t1", "answered")])
    store.close()
    reopened = SQLiteTaskStore(tmp_path / "s.db")
    state = reopened.load()
    reopened.close()  # the store holds the file's lock until closed
    assert state.tasks == [{"id": "t1", "x": 2}]
    assert [seq for seq, _ in state.events["t1"]] == [1, 2, 3]
    assert state.prompts == {"p1": ("t1", "answered")}
    with closing(sqlite3.connect(tmp_path / "s.db")) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_failed_commit_changes_nothing(tmp_path: Path) -> None:
    store = SQLiteTaskStore(tmp_path / "s.db")
    store.commit({"id": "t1"}, [(1, {})], [])
    with pytest.raises(sqlite3.IntegrityError):
        store.commit({"id": "t1", "new": True}, [(1, {})], [("p", "t1", "open")])
    state = store.load()
    store.close()
    assert state.tasks == [{"id": "t1"}] and state.prompts == {}


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ValueError, match="not a usable mock-agent store"):
        SQLiteTaskStore(bad)


def test_restart_in_process_replays_the_open_prompt(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    with MockAgent(store=db) as agent:
        wire = Wire(agent.url)
        open_task, done = wire.start("multi-step"), wire.start()
        done_pid = envelope_of(done)["prompt_id"]
        wire.answer(done["id"], done_pid, {"approve": True})
        before = wire.get_task(open_task["id"])
        wire.close()
    with MockAgent(store=db) as agent:
        wire = Wire(agent.url)
        after = wire.get_task(open_task["id"])
        assert after == before
        assert wire.answer(done["id"], done_pid, {"approve": True})[1]["error"]["code"] == -32010
        nxt = wire.answer(open_task["id"], envelope_of(after)["prompt_id"], {"name": "x"})
        new_pid = envelope_of(nxt[1]["result"]["task"])["prompt_id"]
        assert new_pid not in {done_pid, envelope_of(before)["prompt_id"]}
        wire.close()


def test_a_deadline_that_passed_while_down_fires_after_restart(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    with MockAgent(store=db) as agent:
        wire = Wire(agent.url)
        task = wire.start("deadline", deadline_seconds=0.2, on_deadline="fail")
        wire.close()
    time.sleep(0.3)
    with MockAgent(store=db) as agent:
        wire = Wire(agent.url)
        final = until(
            lambda: _in_state(wire, task["id"], "TASK_STATE_FAILED"),
            timeout=30,
            what="the deadline to fail the task",
            interval=0.01,
        )
        assert final["status"]["state"] == "TASK_STATE_FAILED"
        wire.close()


def _in_state(wire: Wire, task_id: str, state: str) -> dict[str, Any] | None:
    """The task when it is in ``state`` (None otherwise)."""
    task = wire.get_task(task_id)
    return task if task["status"]["state"] == state else None


@pytest.fixture()
def spawn(tmp_path: Path) -> Iterator[object]:
    procs: list[subprocess.Popen[str]] = []

    def start(db: Path) -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hitl_nb.cli", "mock-agent", "--store", str(db)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on http://" in line, proc.stderr.read() if proc.stderr else line
        return proc, line.rsplit(" ", 1)[-1].strip()

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.slow
def test_kill_9_and_restart_on_the_same_file(tmp_path: Path, spawn: object) -> None:
    db = tmp_path / "agent.db"
    proc, url = spawn(db)  # type: ignore[operator]
    wire = Wire(url)
    open_task, done = wire.start(), wire.start()
    done_pid = envelope_of(done)["prompt_id"]
    assert "result" in wire.answer(done["id"], done_pid, {"approve": True})[1]
    _, events = wire.rpc_stream(
        "SendStreamingMessage",
        {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "approval"}]}},
    )
    streamed = events[-1][1]["result"]["statusUpdate"]
    wire.close()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)

    _, url = spawn(db)  # type: ignore[operator]
    wire = Wire(url)
    # The snapshot of a new subscription carries the identical envelope (CF-6).
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SubscribeToTask",
        "params": {"id": open_task["id"]},
    }
    sub = Collector(url, "/", body, headers())
    snap = sub.wait_for(1)[0][1]["result"]["task"]
    assert envelope_of(snap) == envelope_of(open_task)
    # Replay from before the prompt gives the same event, with the same id, byte for byte.
    _, replay = wire.rpc_stream("SubscribeToTask", {"id": streamed["taskId"]}, last_event_id="2")
    assert replay[-1][0] == events[-1][0]
    assert replay[-1][1]["result"]["statusUpdate"] == streamed
    # The open prompt can be answered; the answered one is still refused.
    pid = envelope_of(open_task)["prompt_id"]
    assert wire.answer(open_task["id"], pid, {"approve": True})[1]["result"]
    assert wire.answer(done["id"], done_pid, {"approve": True})[1]["error"]["code"] == -32010
    assert sub.join()[-1][1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    wire.close()


def test_a_second_agent_on_the_same_store_is_refused(tmp_path: Path) -> None:
    # One agent per store file: two writers would collide on commit (IntegrityError
    # after the in-memory change) or silently interleave two agents' ids.
    db = tmp_path / "agent.db"
    with MockAgent(store=db) as agent:
        wire = Wire(agent.url)
        task = wire.start()
        with pytest.raises(ValueError, match="in use by another"):
            MockAgent(store=db).start()
        pid = envelope_of(task)["prompt_id"]
        response, body = wire.answer(task["id"], pid, {"approve": True})
        assert response.status_code == 200 and "result" in body, body
        wire.close()
    with MockAgent(store=db) as again:  # free again once the first one stopped
        assert again.core is not None and task["id"] in again.core.book.tasks
