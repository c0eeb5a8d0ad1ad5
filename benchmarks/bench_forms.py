"""Forms (hitl_nb.forms) against ipywidgets-jsonschema, same schemas, same run.

Run by hand:  python benchmarks/bench_forms.py [--rounds N] [--no-kernel]

For flat schemas of 10, 200 and ~840 properties (~64 KiB, the spec S-2 limit) prints,
plain Python and then inside a real kernel (nbclient, where every widget model is a
comm message):

- build: time to construct the form (best of N; the schema's one-time compile by the
  validator is printed apart as "compile", since the envelope check has usually done
  it before a form is built),
- set/get: time to set a full valid payload and read it back,
- models: widget models created by one form (Layout/Style included),
- the same for ipywidgets-jsonschema 1.2.1 (a benchmark-only dependency: when it is
  not installed its columns say so), and the build-time ratio.

Then, per size, the cold form (compile + build, as the first form of a schema costs)
and its ratio to ipywidgets-jsonschema's build.

Targets (issue): on the 840-property schema a cold form <= 0.25 s plain and >= 4x faster
than ipywidgets-jsonschema; <= 4 widget models per leaf field.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = (10, 200, 840)


def big_schema(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A flat schema of ``n`` mixed properties (~64 KiB compact at 840) and a payload."""
    kinds: list[tuple[dict[str, Any], Any]] = [
        ({"type": "string", "maxLength": 200, "title": "Free text field"}, "some text"),
        ({"type": "integer", "minimum": 0, "maximum": 1000, "title": "A count"}, 7),
        ({"type": "boolean", "title": "A yes/no question"}, False),
        ({"type": "string", "enum": ["red", "green", "blue"], "title": "A choice"}, "green"),
        ({"type": "string", "format": "date", "title": "A day"}, "2026-05-09"),
        ({"type": "number", "exclusiveMinimum": 0, "title": "A measure"}, 2.5),
        ({"type": "string", "pattern": "^[A-Z]{2}-[0-9]{4}$", "title": "A code"}, "AB-1234"),
    ]
    props, payload = {}, {}
    for i in range(n):
        sub, value = kinds[i % len(kinds)]
        props[f"field_{i:04d}"] = {**sub, "description": f"Field {i}"} if i % 7 == 0 else sub
        payload[f"field_{i:04d}"] = value
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": props,
        "required": list(props)[: n // 8],
    }
    return schema, payload


def _models() -> int:
    from ipywidgets.widgets.widget import _instances

    return len(_instances)


def _measure(make: Any, set_get: Any, rounds: int) -> dict[str, Any]:
    best = float("inf")
    models = 0
    form = None
    for _ in range(rounds):
        before = _models()
        t0 = time.perf_counter()
        form = make()
        best = min(best, time.perf_counter() - t0)
        models = _models() - before
    out: dict[str, Any] = {"build": best, "models": models}
    try:
        t0 = time.perf_counter()
        set_get(form)
        out["set_get"] = time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - a failing generator is a result, not a crash
        out["set_get_error"] = f"{type(exc).__name__}: {str(exc)[:60]}"
    return out


def measure(rounds: int = 3) -> dict[str, Any]:
    """Measure both generators on every size; returns plain data (JSON-able)."""
    sys.path.insert(0, str(ROOT))
    from hitl_nb.forms import Form
    from hitl_nb.validation import compile_schema

    try:
        import ipywidgets_jsonschema as iwj  # benchmark-only dependency
    except ImportError:
        iwj = None
    Form({"type": "object"})  # shared Layout/Style objects exist from here on
    results: dict[str, Any] = {"iwj": iwj is not None, "sizes": {}}
    for n in SIZES:
        schema, payload = big_schema(n)
        size = len(json.dumps(schema, separators=(",", ":")).encode())
        t0 = time.perf_counter()
        compile_schema(schema)
        compile_time = time.perf_counter() - t0

        def ours_set_get(form: Any, payload: dict[str, Any] = payload) -> None:
            form.value = payload
            assert form.value == payload and form.is_valid, form.errors[:3]

        row: dict[str, Any] = {"bytes": size, "compile": compile_time}
        row["ours"] = _measure(lambda s=schema: Form(s), ours_set_get, rounds)
        if iwj is not None:

            def iwj_set_get(form: Any, payload: dict[str, Any] = payload) -> None:
                form.data = payload
                assert form.data == payload

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row["iwj"] = _measure(lambda s=schema: iwj.Form(s), iwj_set_get, rounds)
        results["sizes"][str(n)] = row
    return results


def in_kernel(rounds: int) -> dict[str, Any]:
    """Run :func:`measure` inside a real IPython kernel through nbclient."""
    import nbformat
    from nbclient import NotebookClient

    code = (
        "import importlib.util, json\n"
        f"spec = importlib.util.spec_from_file_location('bench_forms', {str(Path(__file__))!r})\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        f"print(json.dumps(mod.measure({rounds})))\n"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    for output in nb.cells[0].outputs:
        if output.get("name") == "stdout":
            return dict(json.loads(output["text"].strip().splitlines()[-1]))
    raise RuntimeError(f"the kernel printed no result: {nb.cells[0].outputs}")


def _fmt_ms(v: float | None) -> str:
    return "-" if v is None else f"{v * 1000:8.1f}"


def report(title: str, results: dict[str, Any]) -> None:
    """Print one table."""
    print(f"\n{title}")
    print(
        f"{'props':>6} {'KiB':>5} {'compile':>8} | {'build ms':>8} {'set/get':>8} "
        f"{'models':>7} {'/field':>6} | {'iwj build':>9} {'set/get':>8} {'models':>7} "
        f"| {'speedup':>7}"
    )
    for n, row in results["sizes"].items():
        ours, other = row["ours"], row.get("iwj")
        line = (
            f"{n:>6} {row['bytes'] / 1024:5.1f} {_fmt_ms(row['compile'])} | "
            f"{_fmt_ms(ours['build'])} {_fmt_ms(ours.get('set_get'))} "
            f"{ours['models']:7d} {ours['models'] / int(n):6.2f} | "
        )
        if other is None:
            line += f"{'not installed':>26} |"
        else:
            sg = _fmt_ms(other.get("set_get")) if "set_get" in other else "  failed"
            line += f"{_fmt_ms(other['build']):>9} {sg} {other['models']:7d} | "
            line += f"{other['build'] / ours['build']:6.1f}x"
        print(line)
        cold = row["compile"] + ours["build"]
        ratio = f", {other['build'] / cold:.1f}x faster" if other is not None else ""
        print(f"{'':>6} cold form (compile + build): {cold * 1000:.1f} ms{ratio}")
        for name in ("ours", "iwj"):
            if row.get(name, {}).get("set_get_error"):
                print(f"{'':>6} {name} set/get failed: {row[name]['set_get_error']}")
    if not results["iwj"]:
        print(
            "ipywidgets-jsonschema is not installed: its columns are skipped "
            "(pip install ipywidgets-jsonschema==1.2.1)"
        )


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="builds per size (best kept)")
    parser.add_argument("--no-kernel", action="store_true", help="skip the nbclient run")
    args = parser.parse_args()
    report("plain Python", measure(args.rounds))
    if not args.no_kernel:
        report("inside a kernel (nbclient)", in_kernel(args.rounds))


if __name__ == "__main__":
    main()
