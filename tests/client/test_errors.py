"""Tests for hitl_nb.client._errors: every wire failure becomes one typed error."""

from __future__ import annotations

import json

import httpx
import pytest

from hitl_nb.client._errors import from_httpx, from_jsonrpc_error, from_rest_error
from hitl_nb.errors import (
    A2A_ERRORS,
    A2AError,
    AgentTimeout,
    AgentUnreachable,
    InternalError,
    PromptConflict,
    ResponseInvalid,
    TaskNotFound,
    UnsupportedOperation,
)

ISSUES = [
    {"path": "/approved", "keyword": "type", "message": "expected boolean, got string"},
    {"path": "/extra", "keyword": "additionalProperties", "message": "not permitted"},
]


@pytest.mark.parametrize("cls", A2A_ERRORS, ids=lambda c: c.__name__)
def test_every_code_maps_to_its_class(cls: type[A2AError]) -> None:
    error = from_jsonrpc_error({"code": cls.code, "message": "m"})
    assert type(error) is cls
    assert error.message == "m"


@pytest.mark.parametrize("cls", A2A_ERRORS, ids=lambda c: c.__name__)
def test_every_rest_reason_maps_to_its_class(cls: type[A2AError]) -> None:
    body = {
        "error": {
            "code": cls.http_status,
            "message": "m",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": cls.reason}
            ],
        }
    }
    assert type(from_rest_error(cls.http_status, body)) is cls


def test_unknown_code_and_malformed_error() -> None:
    error = from_jsonrpc_error({"code": -1234, "message": "odd"})
    assert type(error) is A2AError and "-1234" in str(error)
    assert type(from_jsonrpc_error("nonsense")) is A2AError
    assert type(from_jsonrpc_error({"code": True})) is A2AError


def test_validation_errors_from_the_03_reference_data_object() -> None:
    error = from_jsonrpc_error(
        {"code": -32011, "message": "hitl_response_invalid", "data": {"validation_errors": ISSUES}}
    )
    assert isinstance(error, ResponseInvalid)
    assert error.validation_errors == ISSUES


def test_validation_errors_from_the_10_data_array() -> None:
    data = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "HITL_RESPONSE_INVALID",
            "metadata": {"validation_errors": json.dumps(ISSUES[:1])},
        },
        {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [
                {"field": "extra", "description": "not permitted", "reason": "additionalProperties"}
            ],
        },
    ]
    error = from_jsonrpc_error({"code": -32011, "message": "x", "data": data})
    assert isinstance(error, ResponseInvalid)
    assert error.validation_errors == ISSUES


def test_validation_errors_from_rest_details_and_body() -> None:
    body = {"error": {"code": 422, "message": "bad", "details": [{"validation_errors": ISSUES}]}}
    error = from_rest_error(422, body)
    assert isinstance(error, ResponseInvalid) and error.validation_errors == ISSUES
    flat = from_rest_error(422, {"error": "hitl_response_invalid", "validation_errors": ISSUES})
    assert isinstance(flat, ResponseInvalid) and flat.validation_errors == ISSUES


@pytest.mark.parametrize(
    "status, cls",
    [(409, PromptConflict), (404, TaskNotFound), (500, InternalError), (503, InternalError)],
)
def test_rest_status_without_reason(status: int, cls: type[A2AError]) -> None:
    assert type(from_rest_error(status, {"error": {"message": "m"}})) is cls
    assert type(from_rest_error(status, "not even an object")) is cls


@pytest.mark.parametrize(
    ("status", "cls"), [(409, PromptConflict), (422, ResponseInvalid)], ids=["409", "422"]
)
@pytest.mark.parametrize("reason", ["INVALID_PARAMS", "INVALID_REQUEST", "TASK_NOT_FOUND", None])
def test_the_extensions_statuses_decide_whatever_the_reason(
    status: int, cls: type[A2AError], reason: str | None
) -> None:
    # An agent on an SDK can only send its core reasons: for 409 and 422 the status
    # decides, as the extension defines them (INVALID_PARAMS with 422 is ResponseInvalid).
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "domain": "a2a-protocol.org"}
    if reason:
        info["reason"] = reason
    body = {"error": {"code": status, "message": "m", "details": [info]}}
    assert type(from_rest_error(status, body)) is cls


def test_validation_errors_from_an_sdk_agents_422() -> None:
    # What an agent on the JS SDK can send: its core reason, the list as JSON text in
    # the ErrorInfo metadata, and (from a middleware) a detail of its own type.
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "INVALID_PARAMS",
        "domain": "a2a-protocol.org",
        "metadata": {"validation_errors": json.dumps(ISSUES)},
    }
    body = {"error": {"code": 422, "message": "hitl_response_invalid", "details": [info]}}
    error = from_rest_error(422, body)
    assert isinstance(error, ResponseInvalid) and error.validation_errors == ISSUES
    assert len(error.deviations) == 1 and "JSON text" in error.deviations[0]
    own = {"@type": "type.example.com/acme.Whatever", "validation_errors": ISSUES}
    both = {"error": {"code": 422, "details": [info, own]}}
    error = from_rest_error(422, both)
    assert error.validation_errors == ISSUES  # the same list twice counts once
    assert error.deviations == []  # the array is there: nothing departs


def test_field_violations_only_are_read_and_reported() -> None:
    violation = {"field": "a.b", "description": "no", "reason": "type"}
    bad = {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [violation]}
    error = from_jsonrpc_error({"code": -32011, "message": "x", "data": [bad]})
    assert isinstance(error, ResponseInvalid)
    assert error.validation_errors == [{"path": "/a/b", "keyword": "type", "message": "no"}]
    assert "no validation_errors array" in error.deviations[0]


def test_rest_reason_beats_status() -> None:
    body = {
        "error": {
            "details": [{"@type": "x/google.rpc.ErrorInfo", "reason": "UNSUPPORTED_OPERATION"}]
        }
    }
    assert type(from_rest_error(400, body)) is UnsupportedOperation


def _httpx_errors() -> list[type[httpx.HTTPError]]:
    found = []
    todo: list[type[httpx.HTTPError]] = [httpx.TransportError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


@pytest.mark.parametrize("cls", _httpx_errors(), ids=lambda c: c.__name__)
def test_every_httpx_transport_error_is_mapped(cls: type[httpx.HTTPError]) -> None:
    error = from_httpx(cls("boom"), "GetTask")  # type: ignore[call-arg]
    expected = AgentTimeout if issubclass(cls, httpx.TimeoutException) else AgentUnreachable
    assert isinstance(error, expected)
    assert "GetTask" in str(error) and "boom" in str(error)


def test_validation_errors_packed_as_deeply_nested_text_are_dropped() -> None:
    # json.loads recursed out (RecursionError) on such text from a hostile agent.
    data = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "HITL_RESPONSE_INVALID",
            "metadata": {"validation_errors": "[" * 200_000},
        },
        {"validation_errors": ISSUES},
    ]
    error = from_jsonrpc_error({"code": -32011, "message": "x", "data": data})
    assert isinstance(error, ResponseInvalid)
    assert error.validation_errors == ISSUES
