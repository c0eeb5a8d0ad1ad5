"""``hitl-nb audit``: an export and a verification from the command line, and hostile
input (a file that is no export, the wrong format, a missing database, a time that is
no time): a clear error, exit status 2, nothing changed."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from hitl_nb.cli import main
from hitl_nb.gateway._audit_cli import DEFAULT_STATE_DIR
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.hub._options import DEFAULT_STATE_DIR as HUB_STATE_DIR
from tests.gateway.schema3 import make as schema3


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "gateway.sqlite"

    async def fill() -> None:
        store = SQLiteStore(path)
        for entry in schema3.audit_entries():
            await store.add_audit(entry)
        await store.close()

    asyncio.run(fill())
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["audit", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_state_directory_is_the_hub_services() -> None:
    assert DEFAULT_STATE_DIR == HUB_STATE_DIR


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_an_export_verifies_and_an_edit_is_found(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    out = tmp_path / f"trail.{fmt}"
    assert _run(capsys, "export", "--db", str(db), "--out", str(out))[0] == 0
    status, said, _ = _run(capsys, "verify", "--file", str(out))
    assert status == 0 and "the chain is whole: 10 entries, 1 to 10" in said
    status, said, _ = _run(capsys, "verify", "--db", f"sqlite:///{db}")
    assert status == 0 and "the chain is whole" in said
    text = out.read_text(encoding="utf-8")
    out.write_text(text.replace("Eve", "Steve", 1), encoding="utf-8")
    status, said, _ = _run(capsys, "verify", "--file", str(out))
    assert status == 1
    assert "entry 2 (2025-06-15T15:23:21Z) was changed after it was written" in said


def test_a_time_range_and_a_registration_are_exported(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _run(
        capsys,
        "export",
        "--db",
        str(db),
        "--since",
        "2025-06-15T15:23:22Z",
        "--until",
        "2025-06-15T17:23:24+02:00",
    )
    assert status == 0 and "entries 3 to 5" in err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["seq"] for r in rows] == [3, 4, 5]
    part = tmp_path / "part.jsonl"
    part.write_text(out, encoding="utf-8")
    status, said, _ = _run(capsys, "verify", "--file", str(part))
    assert status == 0 and "entries start at entry 3" in said
    status, out, _ = _run(capsys, "export", "--db", str(db), "--registration", "r-bob")
    assert [json.loads(line)["prompt_id"] for line in out.splitlines()] == ["p-bob-two"]
    status, out, _ = _run(capsys, "export", "--db", str(db), "--since", "2025-06-16")
    assert status == 0 and out == ""


def test_tampering_in_the_database_is_found(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DELETE FROM audit WHERE seq = 4")
    status, said, _ = _run(capsys, "verify", "--db", str(db))
    assert status == 1 and "an entry is missing between 3 and 5" in said


@pytest.mark.parametrize(
    "argv, says",
    [
        pytest.param(
            ["verify", "--db", "{tmp}/missing.sqlite"], "no gateway database", id="missing"
        ),
        pytest.param(
            ["export", "--db", "{tmp}/missing.sqlite"], "no gateway database", id="export"
        ),
        pytest.param(
            ["verify", "--file", "{tmp}/trail.csv", "--format", "jsonl"], "not JSON", id="format"
        ),
        pytest.param(["verify", "--file", "{tmp}/junk.jsonl"], "not JSON", id="junk"),
        pytest.param(["verify", "--file", "{tmp}/other.jsonl"], "no seq", id="not-an-entry"),
        pytest.param(["verify", "--file", "{tmp}/binary.csv"], "not UTF-8", id="binary"),
        pytest.param(["verify", "--file", "{tmp}/header.csv"], "header", id="csv-header"),
        pytest.param(["verify", "--file", "{tmp}/nowhere.jsonl"], "cannot read", id="no-file"),
        pytest.param(["verify", "--db", "{tmp}/junk.jsonl"], "cannot be read", id="not-a-db"),
        pytest.param(["export", "--db", "{db}", "--since", "yesterday"], "not a date", id="time"),
        pytest.param(["export", "--db", "{db}", "--until", "2025-02-30"], "not a date", id="date"),
        pytest.param(["verify", "--db", "mysql://x/y"], "not supported", id="url"),
        pytest.param(["verify", "--db", "{db}", "--registration", "r"], "--file", id="db-reg"),
    ],
)
def test_hostile_input_is_a_clear_error_and_changes_nothing(
    db: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    says: str,
) -> None:
    assert _run(capsys, "export", "--db", str(db), "--out", str(tmp_path / "trail.csv"))[0] == 0
    (tmp_path / "junk.jsonl").write_text("this is not json\n", encoding="utf-8")
    (tmp_path / "other.jsonl").write_text('{"hello": 1}\n', encoding="utf-8")
    (tmp_path / "binary.csv").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "header.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    status, _, err = _run(capsys, *[a.format(tmp=tmp_path, db=db) for a in argv])
    assert status == 2, err
    assert says in err and err.startswith("hitl-nb audit ")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_an_older_database_is_refused_not_upgraded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.sqlite"
    asyncio.run(SQLiteStore(path, upto=5).close())
    status, _, err = _run(capsys, "verify", "--db", str(path))
    assert status == 2 and "schema version 5" in err
    with closing(sqlite3.connect(path)) as conn, conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 5


def test_bad_usage_is_argparses_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["audit", "export", "--format", "xml"])
    assert done.value.code == 2
