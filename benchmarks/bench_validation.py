"""Bounded validation (hitl_nb.validation) against plain cached jsonschema, same run.

Run by hand:  python benchmarks/bench_validation.py [--rounds N]

Prints p50/p95 per validation for an approval payload and for a payload of a ~64 KiB
schema (about 840 properties), bounded vs a plain ``Draft202012Validator`` built once
(the fastest honest use of jsonschema), with the ratio; then the time to answer each
pathological case (which plain jsonschema would not answer at all for some); then
reading request bodies with the strict reader (``parse_json``) against plain
``json.loads``, the lone-surrogate check included (a body holding ``\\ud`` escapes, as
Hangul sent as ASCII does, has its escapes read one by one).
Targets (issue): approval p95 <= 1 ms; overhead <= 1.5x plain; pathological cases
answered within 250 ms plus a small margin.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator

from hitl_nb._keywords import TIME_BUDGET
from hitl_nb.validation import compile_schema, validate_payload

APPROVAL = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["approved"],
    "properties": {
        "approved": {"type": "boolean"},
        "comment": {"type": "string", "maxLength": 1024},
    },
}
APPROVAL_PAYLOAD = {"approved": True, "comment": "Approved after smoke tests passed."}


def big_schema(n: int = 840) -> tuple[dict[str, Any], dict[str, Any]]:
    """A flat schema of ``n`` mixed properties (~64 KiB at 840) and a valid payload."""
    kinds: list[tuple[dict[str, Any], Any]] = [
        ({"type": "string", "maxLength": 200, "title": "Free text field"}, "some text"),
        ({"type": "integer", "minimum": 0, "maximum": 1000, "title": "A count"}, 7),
        ({"type": "boolean", "title": "A yes/no question"}, False),
        ({"enum": ["red", "green", "blue"], "title": "A choice"}, "green"),
        ({"type": "string", "format": "date", "title": "A day"}, "2026-05-09"),
        ({"type": "number", "exclusiveMinimum": 0, "title": "A measure"}, 2.5),
        ({"type": "string", "pattern": "^[A-Z]{2}-[0-9]{4}$", "title": "A code"}, "AB-1234"),
    ]
    props, payload = {}, {}
    for i in range(n):
        sub, value = kinds[i % len(kinds)]
        props[f"field_{i:04d}"] = {**sub, "description": f"Field {i}"} if i % 6 == 0 else sub
        payload[f"field_{i:04d}"] = value
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": props,
        "required": list(props)[:100],
    }
    return schema, payload


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def measure(fn: Callable[[], Any], rounds: int) -> list[float]:
    for _ in range(min(50, rounds)):
        fn()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def compare(name: str, schema: dict[str, Any], payload: Any, rounds: int) -> None:
    compiled = compile_schema(schema)
    plain = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert compiled.validate(payload) == [] and not list(plain.iter_errors(payload))
    rows: dict[str, Callable[[], Any]] = {
        "bounded (compiled)": lambda: compiled.validate(payload),
        "bounded (dict, cache hit)": lambda: validate_payload(schema, payload),
        "plain jsonschema (cached)": lambda: list(plain.iter_errors(payload)),
    }
    # Interleaved (A B C A B C ...) so a machine that speeds up or slows down mid-run
    # affects every variant alike and the ratios stay fair.
    samples: dict[str, list[float]] = {label: [] for label in rows}
    for fn in rows.values():
        measure(fn, 50)  # warm-up
    for _ in range(rounds):
        for label, fn in rows.items():
            t0 = time.perf_counter()
            fn()
            samples[label].append(time.perf_counter() - t0)
    results = {label: percentiles(times) for label, times in samples.items()}
    size = len(json.dumps(schema, separators=(",", ":")).encode())
    print(f"\n{name}: schema {size} bytes, {rounds} rounds")
    base = results["plain jsonschema (cached)"]
    for label, (p50, p95) in results.items():
        print(
            f"  {label:28s} p50 {p50 * 1e3:8.3f} ms   p95 {p95 * 1e3:8.3f} ms"
            f"   ratio p50 {p50 / base[0]:5.2f}x"
        )


def pathological() -> None:
    cases: list[tuple[str, Callable[[], Any]]] = []
    catastrophic = {"type": "object", "properties": {"s": {"pattern": "^(a+)+$"}}}
    cases.append(
        (
            "pattern ^(a+)+$ on 'a'*5000+'!' (RE2)",
            lambda: validate_payload(catastrophic, {"s": "a" * 5000 + "!"}),
        )
    )
    lookahead = {"type": "object", "properties": {"s": {"pattern": "^(?=a)(a+)+$"}}}
    cases.append(
        (
            "look-ahead pattern, fallback engine",
            lambda: validate_payload(lookahead, {"s": "a" * 30000 + "!"}),
        )
    )
    heavy = {
        "type": "object",
        "properties": {
            "a": {
                "type": "array",
                "items": {"allOf": [{"type": "integer", "minimum": -n} for n in range(40)]},
            }
        },
    }
    cases.append(
        ("2M keyword checks (time budget)", lambda: validate_payload(heavy, {"a": [1] * 50_000}))
    )
    uneval = {
        "type": "object",
        "patternProperties": {"^(a+)+$": {}},
        "unevaluatedProperties": False,
    }
    odd_key = {"a" * 28 + "!": 1}
    cases.append(("unevaluatedProperties + ^(a+)+$ key", lambda: validate_payload(uneval, odd_key)))
    unique = {"type": "object", "properties": {"a": {"uniqueItems": True}}}
    pairs = {"a": [[i, str(i)] for i in range(50_000)]}
    cases.append(("uniqueItems over 50k arrays", lambda: validate_payload(unique, pairs)))
    bare = {"type": "object", "properties": {"a": {"items": {f"note{i}": 0 for i in range(5000)}}}}
    cases.append(
        (
            "200k items, 5000 unknown members each",
            lambda: validate_payload(bare, {"a": [0] * 200_000}),
        )
    )
    patterns = {
        "type": "object",
        "additionalProperties": False,
        "patternProperties": {f"^x{i}$": True for i in range(1000)},
    }
    names = {f"k{i}": 0 for i in range(20_000)}
    cases.append(("20k names x 1000 patterns", lambda: validate_payload(patterns, names)))
    dialect = {
        "type": "object",
        "properties": {
            "s": {"$schema": "http://json-schema.org/draft-07/schema#", "pattern": "^(a+)+$"}
        },
    }
    cases.append(
        (
            "draft-07 subschema, ^(a+)+$ on 30 chars",
            lambda: validate_payload(dialect, {"s": "a" * 30 + "!"}),
        )
    )
    nfa = {"type": "object", "properties": {"s": {"pattern": "(a|b|c|.){999}z"}}}
    cases.append(
        (
            "RE2 NFA pattern on 1 MB (refused up front)",
            lambda: validate_payload(nfa, {"s": "a" * 1_000_000}),
        )
    )
    expanding = {"type": "object", "properties": {"s": {"pattern": "(?=a)(((a{100}){100}){100})"}}}
    cases.append(("look-ahead + 10**6-node repeat", lambda: _rejected(expanding)))
    iri = {"type": "object", "properties": {"s": {"format": "iri-reference"}}}
    cases.append(
        ("format iri-reference on 8 KiB", lambda: validate_payload(iri, {"s": "a" * 8192}))
    )
    colliding = {"a": [k * (2**61 - 1) for k in range(1, 42_000)]}
    cases.append(
        ("uniqueItems, 42k colliding int hashes", lambda: validate_payload(unique, colliding))
    )
    many = {"type": "object", "allOf": [{} for _ in range(21_000)]}
    cases.append(("21,000 subschemas (compile)", lambda: _rejected(many)))
    huge = {"approved": True, "comment": "x" * 10**7}
    cases.append(("10 MB string (size cap)", lambda: validate_payload(APPROVAL, huge)))
    deep: dict[str, Any] = {}
    for _ in range(1000):
        deep = {"x": deep}
    cases.append(("payload nested 1000 deep", lambda: validate_payload({"type": "object"}, deep)))
    big = {"type": "object", "description": "x" * 70_000}
    cases.append(("65+ KiB schema", lambda: _rejected(big)))
    cases.append(("remote $ref", lambda: _rejected({"type": "object", "$ref": "https://x/y"})))
    print(f"\npathological cases (budget {TIME_BUDGET * 1000:.0f} ms; schemas compiled first):")
    compiled_first = (
        catastrophic,
        lookahead,
        heavy,
        uneval,
        unique,
        bare,
        patterns,
        dialect,
        nfa,
        iri,
    )
    for schema in (*compiled_first, APPROVAL, {"type": "object"}):
        compile_schema(schema)  # compiling is cached per schema; time the validation alone
    for label, fn in cases:
        t0 = time.perf_counter()
        result = fn()
        took = time.perf_counter() - t0
        print(f"  {label:40s} {took * 1e3:8.1f} ms   -> {str(result)[:90]}")


def _request(text: str) -> str:
    """A JSON-RPC answer whose payload's comment is ``text``, as ASCII JSON text."""
    payload = {"approved": True, "comment": text}
    message = {
        "messageId": "m",
        "role": "ROLE_USER",
        "parts": [{"text": "answer"}],
        "metadata": {"hitl_response_for": {"prompt_id": "p", "payload": payload}},
    }
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message})


def reading(rounds: int) -> None:
    """parse_json against json.loads on bodies an agent or a gateway reads."""
    from hitl_nb._json import parse_json

    bodies = {
        "answer, ASCII (~300 B)": _request("looks good"),
        "answer, French as escapes": _request("déjà vu, très bien " * 20),
        "answer, Hangul as \\ud escapes": _request("\ud55c\uad6d\uc5b4 \ud14c\uc2a4\ud2b8 " * 20),
        "answer, emoji as pairs": _request("\U0001f600 ok " * 20),
        "1 MiB answer, ASCII": _request("x" * (1024 * 1024 - 300)),
        "1 MiB answer, \\ud escapes": _request("\ud55c" * 170_000),
    }
    print("\nreading a body (bytes): p50 / p95, strict reader vs json.loads")
    for name, text in bodies.items():
        raw = text.encode()
        n = rounds if len(raw) < 100_000 else max(20, rounds // 100)
        strict = percentiles(measure(lambda r=raw: parse_json(r, max_bytes=4 << 20), n))
        plain = percentiles(measure(lambda r=raw: json.loads(r), n))
        print(
            f"  {name:32} {len(raw):>8} B  {strict[0] * 1e6:8.1f} / {strict[1] * 1e6:8.1f} us"
            f"   json.loads {plain[0] * 1e6:8.1f} / {plain[1] * 1e6:8.1f} us"
            f"   x{strict[0] / plain[0]:.2f}"
        )


def _rejected(schema: dict[str, Any]) -> str:
    from hitl_nb.errors import SchemaRejected

    try:
        compile_schema(schema)
    except SchemaRejected as exc:
        return f"SchemaRejected: {str(exc)[:60]}"
    return "accepted (!)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    compare("approval payload", APPROVAL, APPROVAL_PAYLOAD, args.rounds)
    schema, payload = big_schema()
    compare("~64 KiB schema payload", schema, payload, max(50, args.rounds // 10))
    pathological()
    reading(args.rounds)


if __name__ == "__main__":
    main()
