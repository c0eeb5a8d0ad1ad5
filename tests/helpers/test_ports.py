"""Ports for test servers: never handed to two callers at once, never where outgoing
connections go, never one somebody listens on."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from tests.helpers import ports
from tests.helpers.ports import free_port


@pytest.fixture(autouse=True)
def counter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A counter of these tests' own: the run's other workers keep theirs."""
    path = tmp_path / "ports"
    monkeypatch.setenv("HITL_NB_TEST_PORTS", str(path))
    yield path


def _some_ports(count: int) -> list[int]:
    return [free_port() for _ in range(count)]


def test_processes_asking_at_once_never_get_the_same_port() -> None:
    with ProcessPoolExecutor(4) as pool:
        handed = [port for batch in pool.map(_some_ports, [50] * 4) for port in batch]
    assert len(set(handed)) == len(handed) == 200


def test_ports_are_below_the_range_outgoing_connections_use() -> None:
    port = free_port()
    assert ports._LOWEST <= port < ports._ephemeral_start()


def test_a_port_somebody_listens_on_is_skipped(counter: Path) -> None:
    taken = free_port()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", taken))
        listener.listen()
        # Wind the counter back so the next turn falls on the taken port.
        counter.write_text(str(taken - ports._LOWEST))
        assert free_port() > taken  # the next free one after it


def test_a_counter_file_with_garbage_starts_again_from_the_bottom(counter: Path) -> None:
    counter.write_text("not a number\x00")
    port = free_port()
    assert ports._LOWEST <= port < ports._ephemeral_start()
