"""The linters CI enforces, run as tests so the README's one test command covers them."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_ruff_is_clean():
    result = run("ruff", "check", "hitl_nb", "tests", "benchmarks", "notebooks")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_is_clean():
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


# Each runtime dependency and the module it is imported as.
_IMPORTED_AS = {
    "ipywidgets": "ipywidgets",
    "jupyter-server": "jupyter_server",
    "tornado": "tornado",
    "jsonschema": "jsonschema",
    "referencing": "referencing",
    "attrs": "attrs",
    "rfc3986-validator": "rfc3986_validator",
    "httpx": "httpx",
    "google-re2": "re2",
    "regex": "regex",
}


def test_every_runtime_dependency_is_imported():
    import re

    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    names = [re.split(r"[\[<>=!~; ]", d, maxsplit=1)[0].lower() for d in declared["dependencies"]]
    assert "nest-asyncio" not in names  # see README: it loses queued cells on ipykernel 7
    source = "\n".join(p.read_text("utf-8") for p in (ROOT / "hitl_nb").rglob("*.py"))
    for name in names:
        module = _IMPORTED_AS.get(name)
        assert module is not None, f"{name}: add it to _IMPORTED_AS (the module it is imported as)"
        imported = re.search(rf"^\s*(import|from) {module}\b", source, re.M)
        assert imported, f"{name} is declared but never imported"


def test_ci_runs_exactly_the_readmes_test_command():
    """The README's second command is what CI runs, so a missing install step fails CI."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    command = ci[-1].strip()
    assert command.startswith('pip install -e ".[test]"'), command
    assert command in readme
