"""How the mock agent writes an A2A error on each binding: the shapes of
:mod:`hitl_nb._wire_errors`, which every agent hitl-nb ships shares, with the
``422-without-errors`` fault applied (it leaves ``validation_errors`` out)."""

from __future__ import annotations

from typing import Any

from hitl_nb import _wire_errors as shared
from hitl_nb._wire_errors import VALIDATION_DETAIL_TYPE
from hitl_nb.errors import A2AError
from hitl_nb.mock_agent._acceptance import OMIT_ERRORS

__all__ = [
    "VALIDATION_DETAIL_TYPE",
    "error_data_v03",
    "error_details",
    "rest_error_body",
]


def _with_errors(exc: A2AError) -> bool:
    return not (isinstance(exc.data, dict) and exc.data.get(OMIT_ERRORS))


def error_details(exc: A2AError) -> list[dict[str, Any]]:
    """The 1.0 ``error.data`` / REST ``details`` list: an ErrorInfo, then hitl details."""
    return shared.error_details(exc, with_errors=_with_errors(exc))


def error_data_v03(exc: A2AError) -> dict[str, Any] | None:
    """The 0.3 ``error.data`` object (the shape of the spec's example, for hitl errors)."""
    return shared.error_data_v03(exc, with_errors=_with_errors(exc))


def rest_error_body(exc: A2AError) -> dict[str, Any]:
    """A ``google.rpc.Status`` body for ``exc``."""
    return shared.rest_error_body(exc, with_errors=_with_errors(exc))
