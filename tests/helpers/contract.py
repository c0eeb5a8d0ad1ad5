"""The contract with JupyterLab's page (``hitl_nb/schemas/lab.schema.json``), for tests:
``conforms("PromptItem", item)`` fails naming every way the instance breaks it."""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from hitl_nb._lab_contract import SCHEMA


@cache
def _validator(name: str) -> Draft202012Validator:
    assert name in SCHEMA["$defs"], f"the contract has no {name}"
    return Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{name}"})


def conforms(name: str, instance: Any) -> Any:
    """Assert that ``instance`` is a ``name`` of the contract (its ``$defs``); returns it."""
    errors = sorted(_validator(name).iter_errors(instance), key=lambda e: list(e.path))
    where = [f"{'/'.join(map(str, e.path)) or '(the whole)'}: {e.message}" for e in errors]
    assert not where, f"not a {name} of the contract:\n" + "\n".join(where)
    return instance
