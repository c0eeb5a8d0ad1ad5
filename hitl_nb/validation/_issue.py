"""One reason a payload is invalid, as the spec's ``validation_errors`` entry has it, and
how a jsonschema error becomes one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._pointer import pointer

if TYPE_CHECKING:
    from jsonschema import ValidationError

__all__ = ["ValidationIssue", "issue_for"]


@dataclass(frozen=True)
class ValidationIssue:
    """One reason a payload is invalid: ``path`` (JSON Pointer), ``keyword``, ``message``."""

    path: str
    keyword: str
    message: str

    def to_json(self) -> dict[str, str]:
        """The spec's ``validation_errors`` entry."""
        return {"path": self.path, "keyword": self.keyword, "message": self.message}

    @classmethod
    def from_json(cls, obj: Any) -> ValidationIssue:
        """Read a ``validation_errors`` entry an agent sent; tolerant of odd members."""
        if not isinstance(obj, Mapping):
            return cls("", "unknown", str(obj))
        path = obj.get("path", "")
        return cls(
            path if isinstance(path, str) else pointer(path) if isinstance(path, list) else "",
            str(obj.get("keyword", "unknown")),
            str(obj.get("message", "")),
        )


def issue_for(error: ValidationError) -> ValidationIssue:
    """The issue a jsonschema error stands for: its member, keyword and a short message."""
    from jsonschema.exceptions import best_match

    from .._messages import message_for

    false_schema = error.validator is None or (
        error.validator == "properties" and error.validator_value is False
    )
    keyword = "false" if false_schema else str(error.validator)
    if keyword in ("anyOf", "oneOf") and error.context:
        # Prefer the alternative that got furthest: its error names the field at fault.
        deeper = best_match(error.context)
        if deeper is not None and len(deeper.absolute_path) > len(error.absolute_path):
            return issue_for(deeper)
    return ValidationIssue(pointer(error.absolute_path), keyword, message_for(error))
