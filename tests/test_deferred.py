"""Slow format libraries load on first use; every format check still runs."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
import hitl_nb
late = ["rfc3987_syntax", "isoduration", "arrow", "rfc3986_validator", "regex", "tornado"]
print("loaded:", [m for m in late if m in sys.modules])
import jsonschema
print("after import jsonschema:", [m for m in late if m in sys.modules])
from hitl_nb.validation import validate_payload
checker = jsonschema.FormatChecker()
cases = [("iri", "http://example.org/ä"), ("iri", "not an iri at all"),
         ("duration", "P3D"), ("duration", "three days"),
         ("uri", "https://example.org/a"), ("uri", "no uri")]
print("jsonschema:", [checker.conforms(v, f) for f, v in cases])
print("hitl_nb:", [not validate_payload({"type": "string", "format": f}, v) for f, v in cases])
print("pattern:", [not validate_payload({"type": "string", "pattern": p}, "abcabc")
                   for p in ("^(abc)\\\\1$", "^x")])
import rfc3987_syntax, isoduration
print("real:", type(isoduration.DurationParsingException).__name__,
      hasattr(rfc3987_syntax, "RFC3987_SYNTAX_TERMS") or rfc3987_syntax.__spec__ is not None)
print("tornado after MockAgent:", hitl_nb.MockAgent is not None and "tornado" in sys.modules)
"""


def test_import_defers_the_slow_libraries_and_keeps_every_check() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK], check=True, capture_output=True, text=True, timeout=120
    ).stdout.splitlines()
    assert out[0] == "loaded: []", out
    # jsonschema imported by someone else (nbformat, the user) after hitl_nb: deferred too
    assert out[1] == "after import jsonschema: []", out
    assert out[2] == "jsonschema: [True, False, True, False, True, False]", out
    assert out[3] == "hitl_nb: [True, False, True, False, True, False]", out
    assert out[4] == "pattern: [True, False]", out  # a back-reference needs the regex engine
    assert out[5].startswith("real: type"), out  # later imports get the real modules
    assert out[6] == "tornado after MockAgent: True", out
