"""What SQLite and PostgreSQL spell apart (hitl_nb/gateway/_sql.py): one statement as each
database reads it."""

from __future__ import annotations

import pytest

from hitl_nb.gateway._sql import POSTGRESQL, SQLITE

STATEMENT = "SELECT 1 FROM leases WHERE reg_id = ? AND expires > {now} AND holder = ?{for_update}"


def test_a_statement_in_each_dialect() -> None:
    assert SQLITE.sql(STATEMENT) == (
        "SELECT 1 FROM leases WHERE reg_id = ? AND expires > "
        "((julianday('now') - 2440587.5) * 86400.0) AND holder = ?"
    )
    assert POSTGRESQL.sql(STATEMENT) == (
        "SELECT 1 FROM leases WHERE reg_id = %s AND expires > "
        "extract(epoch from clock_timestamp())::float8 AND holder = %s FOR UPDATE"
    )
    assert POSTGRESQL.sql(STATEMENT) is POSTGRESQL.sql(STATEMENT)  # made once, kept


def test_column_types_and_lists() -> None:
    assert SQLITE.sql("id {id}, n {serial}") == "id text, n integer PRIMARY KEY AUTOINCREMENT"
    assert POSTGRESQL.sql("id {id}") == 'id text COLLATE "C"'
    assert SQLITE.one_of("reg_id", ["a", "b"]) == ("reg_id IN (?, ?)", ["a", "b"])
    assert POSTGRESQL.one_of("reg_id", ["a", "b"]) == ("reg_id = ANY(?)", [["a", "b"]])


def test_a_percent_sign_is_refused_where_it_would_be_a_parameter() -> None:
    with pytest.raises(AssertionError):
        POSTGRESQL.sql("SELECT 1 WHERE name LIKE 'a%'")
    assert SQLITE.sql("SELECT 1 WHERE name LIKE 'a%'") == "SELECT 1 WHERE name LIKE 'a%'"
