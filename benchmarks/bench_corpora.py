"""Validation and forms on schemas written by others: two public corpora, when present.

Run by hand (the corpora are not part of the repository; clone them anywhere):

    python benchmarks/bench_corpora.py --suite JSON-Schema-Test-Suite/tests \\
        --schemastore schemastore [--only NAME] [--verbose]

JSON Schema Test Suite (``tests/draft2020-12``, and ``optional/format`` for the formats
hitl-nb checks): every case where plain ``jsonschema`` (with its format checker) gives
the expected verdict and ``validate_payload`` does not is listed, apart from the
documented limits (remote ``$ref``, 64 KiB, depth, subschema count: a ``SchemaRejected``
naming one of them); and every crash (an exception other than ``SchemaRejected``).

SchemaStore (``src/schemas/json/<name>.json`` and the positive samples in
``src/test/<name>/``, JSON, YAML or TOML): crashes; of the samples ``validate_payload``
accepts, how many come back exactly (types included) through ``form.value = x;
form.value`` with the form calling them valid; how many forms are one JSON box; how
many fields are JSON boxes (every section opened, at most 400 fields a schema); the
median and worst first build (compile + build, cache cleared).

Targets (issue): 0 crashes; Test Suite mismatches 0 apart from documented limits;
round trip >= 99.5 %; whole-form JSON boxes <= 5 %; JSON fields <= 2 %.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import statistics
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Refusals that are documented limits of the bounded validator (S-2), not mistakes.
LIMITS = (
    "remote $ref",
    "bytes, over the",
    "deeper than",
    "more than",
    "too large",
    "unknown $schema dialect",
)
#: Seconds one first build, one sample's round trip (or one Test Suite file) may take
#: before it counts as a crash (a schema with 25 samples is not a hang at 3 s each).
ITEM_TIMEOUT = 60
#: Most fields counted per SchemaStore schema when every section is opened.
FIELDS_PER_SCHEMA = 400


class _Timeout(BaseException):  # noqa: N818 - not caught by "except Exception"
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise _Timeout


def same(a: Any, b: Any) -> bool:
    """JSON equality that also tells 1 from 1.0 and true from 1 (exact round trip)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# --- JSON Schema Test Suite -----------------------------------------------------------------


def suite(path: Path, verbose: bool) -> None:
    """Compare validate_payload with plain jsonschema on draft2020-12 (+ formats, regex)."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    from hitl_nb.errors import SchemaRejected
    from hitl_nb.validation import FORMAT_CHECKER, validate_payload

    base = path / "draft2020-12"
    files = sorted(base.glob("*.json"))
    ours_formats = set(FORMAT_CHECKER.checkers)
    for f in sorted((base / "optional" / "format").glob("*.json")):
        if f.stem in ours_formats:
            files.append(f)
    # patterns are ECMA 262 regular expressions: hitl-nb follows ECMA there too
    files += [base / "optional" / "ecmascript-regex.json", base / "optional" / "non-bmp-regex.json"]
    counts: Counter[str] = Counter()
    wrong: list[str] = []
    limits: Counter[str] = Counter()
    plain_checker = Draft202012Validator.FORMAT_CHECKER
    for file in files:
        name = str(file.relative_to(base))
        for group in json.loads(file.read_text(encoding="utf-8")):
            schema = group["schema"]
            for case in group["tests"]:
                counts["cases"] += 1
                expected = case["valid"]
                if isinstance(schema, bool):
                    counts["boolean root (not a response_schema)"] += 1
                    continue
                cls = validator_for(schema, default=Draft202012Validator)
                try:
                    plain = cls(schema, format_checker=plain_checker).is_valid(case["data"])
                except Exception:  # noqa: BLE001 - plain jsonschema failing is data too
                    plain = None
                if plain is not expected:
                    counts["plain jsonschema wrong"] += 1
                    continue
                try:
                    got = not validate_payload(schema, case["data"], budget=10.0)
                except SchemaRejected as exc:
                    text = str(exc)
                    if any(limit in text for limit in LIMITS):
                        limits[text.split(":")[0][:50]] += 1
                        continue
                    got = None
                    why = f"refused: {text[:100]}"
                except Exception as exc:  # noqa: BLE001 - a crash is what we count
                    counts["crashes"] += 1
                    wrong.append(
                        f"CRASH {name}: {group['description']} / {case['description']}: "
                        f"{type(exc).__name__}: {exc}"
                    )
                    continue
                else:
                    why = f"said {'valid' if got else 'invalid'}"
                if got is not expected:
                    counts["ours wrong"] += 1
                    wrong.append(f"{name}: {group['description']} / {case['description']}: {why}")
                else:
                    counts["both right"] += 1
    print("JSON Schema Test Suite, draft2020-12 + optional/format (formats we check)")
    for key in ("cases", "both right", "plain jsonschema wrong", "ours wrong", "crashes"):
        print(f"  {key:<40} {counts[key]:6d}")
    print(f"  {'documented limits (refused)':<40} {sum(limits.values()):6d}")
    for why, n in limits.most_common():
        print(f"      {n:4d}  {why}")
    for line in wrong if verbose else wrong[:40]:
        print("   ", line)
    if len(wrong) > 40 and not verbose:
        print(f"    ... and {len(wrong) - 40} more (--verbose)")


# --- SchemaStore ----------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    """YAML/TOML dates and times as the strings they were written as (ISO 8601)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return value


def _load_sample(file: Path) -> Any:
    text = file.read_text(encoding="utf-8-sig")
    if file.suffix == ".json":
        return json.loads(text)
    if file.suffix == ".toml":
        import tomllib  # Python 3.11+; skipped (unreadable) on 3.10

        return _jsonable(tomllib.loads(text))
    import yaml

    return _jsonable(yaml.safe_load(text))


def _count_fields(form: Any) -> tuple[int, int]:
    """(fields, JSON fields) with every section opened, breadth first, bounded."""
    from hitl_nb.forms._objects import ObjectField

    seen: set[int] = set()
    queue = [form.root]
    total = json_fields = 0
    while queue and total < FIELDS_PER_SCHEMA:
        field = queue.pop(0)
        if id(field) in seen:
            continue
        seen.add(id(field))
        if isinstance(field, ObjectField) and not field.built:
            field.build()
        kind = field.kind
        if kind in ("object", "array", "variant", "nullable"):
            queue.extend(field.children())
            if kind == "object" or (kind == "array" and not field.children()):
                total += 1
            continue
        total += 1
        json_fields += kind == "json"
    return total, json_fields


def schemastore(path: Path, only: str | None, verbose: bool) -> None:
    """Crashes, round trips, JSON boxes and build times over SchemaStore."""
    from ipywidgets.widgets.widget import _instances

    import hitl_nb.validation as validation
    from hitl_nb import _keywords
    from hitl_nb.errors import SchemaRejected
    from hitl_nb.forms import Form, FormValueError

    # verdicts, not speed: a loaded machine must not decide (forms validate with it)
    _keywords.TIME_BUDGET = 10.0
    schemas = path / "src" / "schemas" / "json"
    tests = path / "src" / "test"
    counts: Counter[str] = Counter()
    builds: list[tuple[float, str]] = []
    notes: list[str] = []
    total_fields = json_fields = 0
    names = sorted(d.name for d in tests.iterdir() if d.is_dir())
    if only:
        names = [n for n in names if only in n]
    for name in names:
        file = schemas / f"{name}.json"
        if not file.exists():
            counts["no schema file"] += 1
            continue
        try:
            schema = json.loads(file.read_text(encoding="utf-8-sig"))
        except ValueError:
            counts["schema not JSON"] += 1
            continue
        counts["schemas"] += 1
        signal.alarm(ITEM_TIMEOUT)
        where = name
        try:
            validation._compile.cache_clear()
            t0 = time.perf_counter()
            try:
                validation.compile_schema(schema)
            except SchemaRejected as exc:
                counts["refused (SchemaRejected)"] += 1
                notes.append(f"refused {name}: {str(exc)[:120]}")
                continue
            form = Form(schema)
            builds.append((time.perf_counter() - t0, name))
            counts["built"] += 1
            if form.root.kind == "json":
                counts["whole form is one JSON box"] += 1
                notes.append(f"json box {name}: {form.root.node.note}")
            n, j = _count_fields(form)
            total_fields += n
            json_fields += j
            for sample in sorted((tests / name).iterdir()):
                signal.alarm(ITEM_TIMEOUT)
                where = f"{name}/{sample.name}"
                try:
                    value = _load_sample(sample)
                except Exception:  # noqa: BLE001 - an unreadable sample is skipped
                    counts["samples unreadable"] += 1
                    continue
                counts["samples"] += 1
                if validation.validate_payload(schema, value, budget=10.0):
                    counts["samples refused by validate_payload"] += 1
                    continue
                counts["samples accepted"] += 1
                form = Form(schema)
                try:
                    form.value = value
                except FormValueError as exc:
                    counts["round trip: set refused"] += 1
                    notes.append(f"set refused {name}/{sample.name}: {exc}")
                    continue
                back = form.value
                if not same(back, value):
                    counts["round trip: changed"] += 1
                    if form.is_valid:
                        counts["round trip: changed, called valid (silent)"] += 1
                    notes.append(f"changed {name}/{sample.name}: {_diff(value, back)}")
                elif not form.is_valid:
                    counts["round trip: same, called invalid"] += 1
                    notes.append(f"invalid {name}/{sample.name}: {form.errors[:2]}")
                else:
                    counts["round trip: exact and valid"] += 1
        except _Timeout:
            counts["crashes"] += 1
            notes.append(f"CRASH {where}: over {ITEM_TIMEOUT} s")
        except Exception as exc:  # noqa: BLE001 - a crash is what we count
            counts["crashes"] += 1
            where = traceback.extract_tb(exc.__traceback__)[-1]
            notes.append(
                f"CRASH {name}: {type(exc).__name__}: {str(exc)[:100]} "
                f"({Path(where.filename).name}:{where.lineno})"
            )
        finally:
            signal.alarm(0)
            _instances.clear()  # no front end: let the widgets of finished forms go
    print("SchemaStore (schemas with positive samples)")
    for key, n in sorted(counts.items()):
        print(f"  {key:<45} {n:6d}")
    accepted = counts["samples accepted"]
    if accepted:
        exact = counts["round trip: exact and valid"]
        print(f"  round trip exact and valid: {100 * exact / accepted:.2f} % of accepted samples")
    if counts["built"]:
        boxes = counts["whole form is one JSON box"]
        print(f"  whole form one JSON box: {100 * boxes / counts['built']:.1f} % of built forms")
    if total_fields:
        print(
            f"  JSON fields: {json_fields} of {total_fields} = "
            f"{100 * json_fields / total_fields:.2f} %"
        )
    if builds:
        times = sorted(builds)
        median = statistics.median(t for t, _ in times) * 1000
        print(
            f"  first build (compile + build): median {median:.1f} ms, "
            f"worst {times[-1][0] * 1000:.0f} ms ({times[-1][1]})"
        )
    for line in notes if verbose else notes[:60]:
        print("   ", line)
    if len(notes) > 60 and not verbose:
        print(f"    ... and {len(notes) - 60} more (--verbose)")


def _diff(a: Any, b: Any, at: str = "") -> str:
    """Where two JSON values first differ, as a pointer and both sides."""
    if type(a) is type(b) and isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b or not same(a[k], b[k]):
                return _diff(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{at}/{k}")
    if type(a) is type(b) and isinstance(a, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not same(x, y):
                return _diff(x, y, f"{at}/{i}")
    return f"{at or '/'}: {json.dumps(a)[:60]} -> {json.dumps(b)[:60]}"


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, help="JSON-Schema-Test-Suite/tests")
    parser.add_argument("--schemastore", type=Path, help="a SchemaStore checkout")
    parser.add_argument("--only", help="SchemaStore schemas whose name contains this")
    parser.add_argument("--verbose", action="store_true", help="list every finding")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    signal.signal(signal.SIGALRM, _alarm)
    if args.suite:
        suite(args.suite, args.verbose)
    if args.schemastore:
        schemastore(args.schemastore, args.only, args.verbose)
    if not (args.suite or args.schemastore):
        parser.error("give --suite and/or --schemastore (the corpora are not bundled)")


if __name__ == "__main__":
    main()
