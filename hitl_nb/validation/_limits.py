"""The S-2 bounds of validation, in one place (hitl-prompt/v1 §Security Considerations)."""

from __future__ import annotations

__all__ = [
    "DIALECT_2020_12",
    "MAX_DEPTH",
    "MAX_FORMAT_LENGTH",
    "MAX_ISSUES",
    "MAX_PAYLOAD_BYTES",
    "MAX_SCHEMA_BYTES",
    "MAX_SUBSCHEMAS",
]

#: S-2: the largest response_schema accepted, in bytes of compact UTF-8 JSON.
MAX_SCHEMA_BYTES = 64 * 1024
#: S-2: how deep subschemas may nest, and how deep a payload may nest.
MAX_DEPTH = 32
#: How many subschemas (``true``/``false`` included) a response_schema may hold: each
#: costs about 0.2 ms to check against the metaschema when the schema is compiled.
MAX_SUBSCHEMAS = 2048
#: The largest payload accepted, in bytes of compact UTF-8 JSON.
MAX_PAYLOAD_BYTES = 1024 * 1024
#: Strings longer than this fail every ``format`` (no valid date, email, uri... is).
MAX_FORMAT_LENGTH = 8192
#: Validation stops collecting after this many issues.
MAX_ISSUES = 100

DIALECT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
