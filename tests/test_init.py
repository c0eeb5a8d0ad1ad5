"""``import hitl_nb`` loads its names on first use; jsonschema waits for the first schema."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
import sys
heavy = ("jsonschema", "ipywidgets", "httpx", "tornado", "hitl_nb.client", "hitl_nb.forms")
def loaded():
    return [m for m in heavy if m in sys.modules]
import hitl_nb
print(loaded())
hitl_nb.HitlError  # errors only
print(loaded())
from hitl_nb import Conversation
print(loaded())
from hitl_nb.validation import compile_schema
compile_schema({"type": "object"})
print("jsonschema" in sys.modules, hitl_nb.spec.EXTENSION_URI.startswith("https://"))
"""


def test_names_and_jsonschema_load_on_first_use() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK], check=True, capture_output=True, text=True, timeout=120
    ).stdout.splitlines()
    assert out[0] == "[]", out
    assert out[1] == "[]", out
    assert out[2] == "['ipywidgets', 'httpx', 'hitl_nb.client', 'hitl_nb.forms']", out
    assert out[3] == "True True", out


def test_an_unknown_name_is_an_attribute_error() -> None:
    import hitl_nb

    with pytest.raises(AttributeError, match="NoSuchThing"):
        hitl_nb.NoSuchThing  # noqa: B018
    assert {"Conversation", "Form", "MockAgent"} <= set(dir(hitl_nb))
