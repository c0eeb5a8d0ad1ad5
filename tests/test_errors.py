import sys

import pytest

from hitl_nb import errors
from hitl_nb.errors import (
    A2A_ERRORS,
    A2AError,
    HitlError,
    PromptConflict,
    ResponseInvalid,
    TaskNotFound,
    error_for_code,
    error_for_reason,
    error_for_status,
)

# Every code of A2A 1.0 §5.4 plus JSON-RPC's own, and hitl-prompt/v1's two, with the
# HTTP status each maps to. A code missing from errors.py fails here.
SPEC_CODES = {
    -32700: 400,
    -32600: 400,
    -32601: 404,
    -32602: 400,
    -32603: 500,
    -32001: 404,
    -32002: 400,
    -32003: 400,
    -32004: 400,
    -32005: 400,
    -32006: 500,
    -32007: 400,
    -32008: 400,
    -32009: 400,
    -32010: 409,
    -32011: 422,
}


@pytest.mark.parametrize(("code", "status"), sorted(SPEC_CODES.items()))
def test_every_spec_code_is_mapped(code, status):
    cls = error_for_code(code)
    assert cls is not A2AError, f"code {code} is not mapped"
    assert cls.code == code
    assert cls.http_status == status
    assert error_for_reason(cls.reason) is cls
    assert error_for_status(status, cls.reason) is cls


def test_table_has_no_strays():
    assert {cls.code for cls in A2A_ERRORS} == set(SPEC_CODES)
    assert len({cls.reason for cls in A2A_ERRORS}) == len(A2A_ERRORS)


def test_every_exception_in_the_module_is_in_the_tree_and_the_docstring():
    doc = errors.__doc__ or ""
    for name in dir(errors):
        obj = getattr(errors, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, HitlError), name
            assert name in doc, f"{name} is missing from the tree in errors.py's docstring"
            if issubclass(obj, A2AError) and obj is not A2AError and obj not in A2A_ERRORS:
                # A variant with its own HTTP status (413, 415) keeps its parent's code.
                (parent,) = obj.__bases__
                assert parent in A2A_ERRORS and obj.code == parent.code, name
                assert obj.http_status != parent.http_status, name


def test_hitl_codes_carry_the_spec_messages():
    # §Acceptance and rejection: the classes are the one home of these facts.
    assert (PromptConflict.code, PromptConflict.http_status, PromptConflict.default_message) == (
        -32010,
        409,
        "hitl_already_answered_or_unknown",
    )
    assert (ResponseInvalid.code, ResponseInvalid.http_status, ResponseInvalid.default_message) == (
        -32011,
        422,
        "hitl_response_invalid",
    )


def test_unknown_code_and_status_fall_back():
    assert error_for_code(-1) is A2AError
    assert error_for_status(418) is A2AError
    assert error_for_status(503) is errors.InternalError
    assert error_for_status(404) is TaskNotFound
    assert error_for_status(400, "not-a-reason") is errors.InvalidRequest


@pytest.mark.parametrize("status", [400, 403, 404, 405, 410, 413, 415, 500, 502, 503])
def test_the_gateways_own_refusals_are_gateway_refused(status):
    # The responder gateway's answers go through the same table (its reason is never read).
    assert error_for_status(status, gateway=True) is errors.GatewayRefused
    assert error_for_status(status, "TASK_NOT_FOUND", gateway=True) is errors.GatewayRefused


def test_the_gateways_409_and_422_are_the_extensions_rejections():
    # §Acceptance and rejection: the same classes as an agent's, whoever sends them.
    assert error_for_status(409, gateway=True) is PromptConflict
    assert error_for_status(422, gateway=True) is ResponseInvalid
    assert error_for_status(409) is PromptConflict and error_for_status(422) is ResponseInvalid


def test_response_invalid_keeps_and_shows_validation_errors():
    exc = ResponseInvalid(
        validation_errors=[
            {"path": "/approved", "keyword": "type", "message": "expected boolean, got string"}
        ]
    )
    assert exc.validation_errors[0]["path"] == "/approved"
    assert "/approved: expected boolean" in str(exc)
    assert exc.code == -32011 and exc.http_status == 422


def test_every_hitl_error_in_the_package_lives_in_errors_and_is_drawn_in_the_tree():
    import importlib
    import pkgutil

    import hitl_nb

    for info in pkgutil.walk_packages(hitl_nb.__path__, "hitl_nb."):
        if info.name.endswith("pytest_plugin"):
            continue
        bridges = (
            "hitl_nb.agent.pydantic_ai",
            "hitl_nb.agent.adk",
            "hitl_nb.agent.agent_framework",
        )
        if info.name.startswith(bridges) and sys.version_info < (3, 11):
            continue  # Pydantic AI 2, ADK 2.15, the Agent Framework (bridges' extras) need 3.11
        importlib.import_module(info.name)
    doc = errors.__doc__ or ""
    pending, seen = [HitlError], set()
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                pending.append(sub)
    package = {c for c in seen if c.__module__.startswith("hitl_nb")}
    elsewhere = sorted(
        f"{c.__module__}.{c.__name__}" for c in package if c.__module__ != errors.__name__
    )
    assert not elsewhere, f"HitlError subclasses outside hitl_nb/errors.py: {elsewhere}"
    missing = sorted(c.__name__ for c in package if c.__name__ not in doc)
    assert not missing, f"not drawn in errors.py's docstring: {missing}"


@pytest.mark.parametrize(
    ("module", "names"),
    [
        (
            "hitl_nb",
            [
                "AnswerOutcomeUnknown",
                "ExtensionNotDeclared",
                "NoUsableInterface",
                "FormClosed",
                "FormInvalid",
                "FormValueError",
            ],
        ),
        ("hitl_nb.client", ["AnswerOutcomeUnknown", "ExtensionNotDeclared", "NoUsableInterface"]),
        ("hitl_nb.forms", ["FormClosed", "FormInvalid", "FormValueError"]),
        ("hitl_nb.a2a", ["WireDecodeError"]),
    ],
)
def test_moved_errors_are_still_importable_where_users_import_them(module, names):
    import importlib

    package = importlib.import_module(module)
    for name in names:
        assert getattr(package, name) is getattr(errors, name), f"{module}.{name}"


@pytest.mark.parametrize(
    ("status", "phrase"),
    [
        (422, "Unprocessable Entity"),  # the spec's words (3.13 says "Unprocessable Content")
        (413, "Request Entity Too Large"),  # 3.13: "Content Too Large"
        (409, "Conflict"),
        (200, "OK"),
        (299, "Unknown"),
    ],
)
def test_reason_phrases_are_the_same_on_every_python(status: int, phrase: str) -> None:
    assert errors.reason_phrase(status) == phrase
