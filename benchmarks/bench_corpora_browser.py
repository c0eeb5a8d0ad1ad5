"""The browser's form renderer on SchemaStore's samples (node + jsdom), beside the Python
forms' figures of ``bench_corpora.py``.

Run by hand (SchemaStore is not part of the repository; clone it anywhere):

    python benchmarks/bench_corpora_browser.py --schemastore schemastore [--only NAME] [--verbose]

The samples are read as ``bench_corpora.py`` reads them (JSON, YAML, TOML) and kept when
the gateway's validator accepts them and the schema compiles (the same denominator as
the Python figure); ``bench_corpora_browser.mjs`` draws each with ``renderForm`` and
reads it back. Needs ``jlpm install`` (typescript and jsdom from node_modules).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_corpora import _load_sample  # noqa: E402


def cases(path: Path, only: str | None) -> list[dict[str, object]]:
    """Every SchemaStore schema with the samples the validator accepts."""
    import hitl_nb.validation as validation
    from hitl_nb import _keywords
    from hitl_nb.errors import SchemaRejected

    _keywords.TIME_BUDGET = 10.0
    schemas = path / "src" / "schemas" / "json"
    tests = path / "src" / "test"
    out: list[dict[str, object]] = []
    for name in sorted(d.name for d in tests.iterdir() if d.is_dir()):
        if only and only not in name:
            continue
        file = schemas / f"{name}.json"
        if not file.exists():
            continue
        try:
            schema = json.loads(file.read_text(encoding="utf-8-sig"))
            validation.compile_schema(schema)
        except (ValueError, SchemaRejected):
            continue
        samples = []
        for sample in sorted((tests / name).iterdir()):
            try:
                value = _load_sample(sample)
                json.dumps(value, allow_nan=False)
            except Exception:  # noqa: BLE001 - an unreadable sample is skipped
                continue
            if not validation.validate_payload(schema, value, budget=10.0):
                samples.append(value)
        out.append({"name": name, "schema": schema, "samples": samples})
    return out


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemastore", type=Path, required=True)
    parser.add_argument("--only")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    found = cases(args.schemastore, args.only)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for case in found:
            f.write(json.dumps(case) + "\n")
    script = ROOT / "benchmarks" / "bench_corpora_browser.mjs"
    flags = ["--verbose"] if args.verbose else []
    subprocess.run(["node", str(script), f.name, *flags], check=True)
    Path(f.name).unlink()


if __name__ == "__main__":
    main()
