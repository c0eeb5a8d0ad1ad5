"""Make the schema-5 fixtures: a gateway database of each kind, written by the stores of
hitl-nb's schema version 5 (the last whose audit trail was not chained), holding every
kind of row those stores keep, ten audit entries among them.

    git worktree add ../hitl-nb-v5 ce125f7   # the last commit whose stores write version 5
    cd ../hitl-nb-v5 && python tests/gateway/schema5/make.py --out DIR

The rows are those of the schema-3 fixtures (``tests/gateway/schema3/make.py``: the
same writes through the store's interface, on the same standing clock); only the
version they are written by differs. It writes ``sqlite.sql``, ``postgresql.sql`` and
``readback.json`` into ``DIR`` as that script does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from hitl_nb.gateway._schema import SCHEMA_VERSION  # noqa: E402
from tests.gateway.schema3 import make as schema3  # noqa: E402

VERSION = 5


def _retitle(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    text = text.replace("of schema version 3", f"of schema version {VERSION}", 1)
    text = text.replace("tests/gateway/schema3/make.py", "tests/gateway/schema5/make.py", 1)
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    if SCHEMA_VERSION != VERSION:
        sys.exit(f"these stores write schema version {SCHEMA_VERSION}: run this at {VERSION}")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        from_sqlite = asyncio.run(schema3.sqlite_fixture(Path(d)))
        shutil.copy(Path(d) / "sqlite.sql", args.out / "sqlite.sql")
    from_postgres = asyncio.run(schema3.postgres_fixture(args.out))
    for name in ("sqlite.sql", "postgresql.sql"):
        _retitle(args.out / name)
    if from_sqlite != from_postgres:
        differ = [k for k in from_sqlite if from_sqlite[k] != from_postgres.get(k)]
        sys.exit(f"the two stores read back differently: {differ}")
    text = json.dumps(from_sqlite, indent=1, ensure_ascii=False, sort_keys=True)
    (args.out / "readback.json").write_text(text + "\n", encoding="utf-8")
    print(f"wrote {args.out}/sqlite.sql, postgresql.sql, readback.json")


if __name__ == "__main__":
    main()
