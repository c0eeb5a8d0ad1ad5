import copy
import json
import uuid
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from hitl_nb import spec
from hitl_nb.errors import InvalidParams, MalformedPrompt, MalformedResponse
from hitl_nb.spec import (
    EXTENSION_URI,
    AnyResponder,
    ConsensusResponder,
    PromptEnvelope,
    ResponseEnvelope,
    SpecificResponder,
    UnknownResponder,
    check_prompt,
    check_response,
    parse_responders,
    parse_rfc3339,
    read_response,
)
from hitl_nb.validation import FORMAT_CHECKER

NOW = datetime(2026, 5, 9, 17, 42, 11, tzinfo=timezone.utc)
PROMPT = {
    "prompt_id": "f7d4b1c0-9b25-4e8c-a4ce-3d6a51e8a772",
    "prompt": "Approve push of release v2.0.3 to production?",
    "response_schema": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": False,
        "required": ["approved"],
        "properties": {
            "approved": {"type": "boolean"},
            "comment": {"type": "string", "maxLength": 1024},
        },
    },
    "deadline": "2026-05-09T18:30:00Z",
    "allowed_responders": ["specific:release-manager@example.com"],
}


def errors(findings):
    return {f.pointer for f in findings if f.severity == "error"}


def test_constants_match_the_spec():
    assert EXTENSION_URI == "https://agentic-sandbox.aiwg.io/extensions/hitl-prompt/v1"
    assert spec.HEADER_EXTENSIONS == "A2A-Extensions"
    assert spec.HEADER_EXTENSIONS_V03 == "X-A2A-Extensions"
    assert spec.HEADER_VERSION == "A2A-Version"
    assert spec.RESPONSE_KEY == "hitl_response_for"


def test_agent_card_entry_writes_defaults_out():
    entry = spec.agent_card_extension()
    assert entry["uri"] == EXTENSION_URI
    assert entry["required"] is False and entry["params"] == {}
    assert '"required": false' in json.dumps(entry) and '"params": {}' in json.dumps(entry)


def test_the_spec_example_is_strict_valid_and_round_trips():
    env = PromptEnvelope.from_json(PROMPT, now=NOW)
    assert env.to_json() == PROMPT
    assert env.to_metadata() == {EXTENSION_URI: PROMPT}
    assert env.responders == (SpecificResponder("release-manager@example.com"),)
    assert env.deadline_at == datetime(2026, 5, 9, 18, 30, tzinfo=timezone.utc)
    assert PromptEnvelope.from_json(json.dumps(PROMPT), now=NOW) == env


def test_envelope_does_not_share_the_callers_dicts():
    obj = copy.deepcopy(PROMPT)
    env = PromptEnvelope.from_json(obj, now=NOW)
    obj["response_schema"]["type"] = "array"
    assert env.response_schema["type"] == "object"
    out = env.to_json()
    out["response_schema"]["type"] = "array"
    assert env.response_schema["type"] == "object"


def test_envelope_validates_payloads_against_its_schema():
    env = PromptEnvelope.from_json(PROMPT, now=NOW)
    assert env.validate({"approved": True}) == []
    assert env.validate({"approved": "yes"})[0].path == "/approved"
    assert env.response({"approved": True}).to_metadata() == {
        "hitl_response_for": {"prompt_id": PROMPT["prompt_id"], "payload": {"approved": True}}
    }


def test_display_escapes_the_prompt():
    env = PromptEnvelope.from_json({**PROMPT, "prompt": "<script>alert(1)</script> & co"}, now=NOW)
    html = env._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "&amp; co" in html
    assert "<script>alert(1)</script>" in str(env)  # plain text keeps it, as text


def test_absent_optional_members_stay_absent():
    minimal = {k: PROMPT[k] for k in ("prompt_id", "prompt", "response_schema")}
    env = PromptEnvelope.from_json(minimal)
    assert env.to_json() == minimal
    assert env.responders == (AnyResponder(),)  # §Prompt Envelope: absent means ["any"]
    assert env.deadline_at is None


# --- strict: each single mutation that breaks a MUST is named ------------------------------

MUTATIONS = [
    ("bad-uuid", lambda e: e.update(prompt_id="not-a-uuid"), "/prompt_id"),
    (
        "uuid-variant",
        lambda e: e.update(prompt_id="f7d4b1c0-9b25-4e8c-c4ce-3d6a51e8a772"),
        "/prompt_id",
    ),
    ("nil-uuid", lambda e: e.update(prompt_id=str(uuid.UUID(int=0))), "/prompt_id"),
    ("uuid-type", lambda e: e.update(prompt_id=7), "/prompt_id"),
    ("no-id", lambda e: e.pop("prompt_id"), "/prompt_id"),
    ("empty-prompt", lambda e: e.update(prompt=""), "/prompt"),
    ("prompt-type", lambda e: e.update(prompt=["x"]), "/prompt"),
    ("no-prompt", lambda e: e.pop("prompt"), "/prompt"),
    ("no-schema", lambda e: e.pop("response_schema"), "/response_schema"),
    ("schema-type", lambda e: e.update(response_schema="object"), "/response_schema"),
    (
        "schema-not-object",
        lambda e: e["response_schema"].update(type="array"),
        "/response_schema/type",
    ),
    (
        "schema-invalid",
        lambda e: e["response_schema"].update(required="approved"),
        "/response_schema",
    ),
    (
        "schema-too-big",
        lambda e: e["response_schema"].update(description="x" * 65536),
        "/response_schema",
    ),
    (
        "schema-draft-07",
        lambda e: e["response_schema"].update(
            {"$schema": "http://json-schema.org/draft-07/schema#"}
        ),
        "/response_schema/$schema",
    ),
    ("deadline-past", lambda e: e.update(deadline="2026-05-09T17:00:00Z"), "/deadline"),
    ("deadline-format", lambda e: e.update(deadline="tomorrow at noon"), "/deadline"),
    ("deadline-no-zone", lambda e: e.update(deadline="2026-05-09T18:30:00"), "/deadline"),
    (
        "responder-pattern",
        lambda e: e.update(allowed_responders=["consensus:0"]),
        "/allowed_responders/0",
    ),
    (
        "responder-space",
        lambda e: e.update(allowed_responders=["specific:a b"]),
        "/allowed_responders/0",
    ),
    ("responders-empty", lambda e: e.update(allowed_responders=[]), "/allowed_responders"),
    ("responders-type", lambda e: e.update(allowed_responders="any"), "/allowed_responders"),
    ("extra-member", lambda e: e.update(ui_hint="modal"), "/ui_hint"),
]


@pytest.mark.parametrize(("mutate", "pointer"), [pytest.param(m, p, id=i) for i, m, p in MUTATIONS])
def test_strict_names_the_broken_member(mutate, pointer):
    env = copy.deepcopy(PROMPT)
    mutate(env)
    with pytest.raises(MalformedPrompt) as info:
        PromptEnvelope.from_json(env, now=NOW)
    assert pointer in errors(info.value.findings)
    assert pointer in str(info.value) or len(info.value.findings) > 3
    for finding in info.value.findings:
        assert finding.section.startswith("§") and finding.rule


def test_should_rules_are_warnings():
    env = copy.deepcopy(PROMPT)
    env["prompt"] = "x" * 5000
    del env["response_schema"]["additionalProperties"]
    env["prompt_id"] = "01890a5d-ac96-774b-bcce-b302099a8057"  # UUID v7 (RFC 9562)
    parsed = PromptEnvelope.from_json(env, now=NOW)
    warned = {(f.pointer, f.severity) for f in parsed.findings}
    assert warned == {
        ("/prompt", "warning"),
        ("/response_schema/additionalProperties", "warning"),
        ("/prompt_id", "warning"),
    }


# --- orchestrator mode: what a consumer must accept or refuse -----------------------------


def test_orchestrator_accepts_what_the_spec_says_it_must():
    env = copy.deepcopy(PROMPT)
    env["deadline"] = "2020-01-01T00:00:00Z"  # S-4: a past deadline is a soft signal
    env["allowed_responders"] = ["any", "quorum:majority", "specific:bob"]  # unknown: ignore
    env["x_future_field"] = 1  # §Versioning: minor versions may add optional fields
    parsed = PromptEnvelope.from_json(env, mode="orchestrator", now=NOW)
    assert parsed.responders == (
        AnyResponder(),
        UnknownResponder("quorum:majority"),
        SpecificResponder("bob"),
    )
    assert all(f.severity == "warning" for f in parsed.findings)
    assert {f.pointer for f in parsed.findings} == {
        "/deadline",
        "/allowed_responders/1",
        "/x_future_field",
    }


@pytest.mark.parametrize(
    ("mutate", "pointer"),
    [
        pytest.param(
            lambda e: e["response_schema"].update(description="x" * 65536),
            "/response_schema",
            id="schema-over-64k",
        ),
        pytest.param(lambda e: e.pop("prompt_id"), "/prompt_id", id="no-id"),
        pytest.param(lambda e: e.update(prompt=""), "/prompt", id="empty-prompt"),
        pytest.param(
            lambda e: e["response_schema"].update(type="string"),
            "/response_schema/type",
            id="not-object",
        ),
        pytest.param(
            lambda e: e.update(allowed_responders=[3]),
            "/allowed_responders/0",
            id="responder-not-string",
        ),
    ],
)
def test_orchestrator_refuses_what_is_broken(mutate, pointer):
    env = copy.deepcopy(PROMPT)
    mutate(env)
    with pytest.raises(MalformedPrompt) as info:
        PromptEnvelope.from_json(env, mode="orchestrator", now=NOW)
    assert pointer in errors(info.value.findings)


def test_non_object_envelopes():
    assert errors(check_prompt(None)) == {""}
    assert errors(check_prompt([PROMPT])) == {""}
    with pytest.raises(MalformedPrompt):
        PromptEnvelope.from_json("[1, 2]")


# --- responders and timestamps ------------------------------------------------------------


def test_responder_parsing():
    assert parse_responders(None) == (AnyResponder(),)
    assert parse_responders(["consensus:2", "specific:x:y", "consensus:02", "any "]) == (
        ConsensusResponder(2),
        SpecificResponder("x:y"),
        UnknownResponder("consensus:02"),
        UnknownResponder("any "),
    )
    assert [str(r) for r in parse_responders(["any", "specific:a", "consensus:3"])] == [
        "any",
        "specific:a",
        "consensus:3",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-09T18:30:00Z", datetime(2026, 5, 9, 18, 30, tzinfo=timezone.utc)),
        (
            "2026-05-09t18:30:00.123456789+02:00",
            datetime(2026, 5, 9, 16, 30, 0, 123456, tzinfo=timezone.utc),
        ),
        ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, tzinfo=timezone.utc)),
        ("2026-02-30T00:00:00Z", None),
        ("2026-05-09T18:30:00", None),
        ("2026-05-09 18:30:00Z", None),
        ("2026-05-09T18:30:00+24:00", None),
    ],
)
def test_rfc3339(text, expected):
    assert parse_rfc3339(text) == expected


# --- the response envelope ------------------------------------------------------------------


def test_response_round_trip_and_checks():
    obj = {"prompt_id": PROMPT["prompt_id"], "payload": {"approved": True}}
    env = ResponseEnvelope.from_json(obj)
    assert env.to_json() == obj and env.to_metadata() == {"hitl_response_for": obj}
    assert "approved" in env._repr_html_()
    assert errors(check_response({**obj, "extra": 1})) == {"/extra"}
    assert errors(check_response({"prompt_id": "nope", "payload": []})) == {
        "/prompt_id",
        "/payload",
    }
    assert errors(check_response({})) == {"/prompt_id", "/payload"}
    with pytest.raises(MalformedResponse, match="prompt_id"):
        ResponseEnvelope.from_json({"payload": {}})


def test_an_agent_reads_a_response_or_names_the_member_that_is_wrong():
    obj = {"prompt_id": PROMPT["prompt_id"], "payload": {"approved": True}}
    assert read_response(obj) == (PROMPT["prompt_id"], {"approved": True})
    with pytest.raises(InvalidParams, match="^/message/metadata/hitl_response_for: expected an"):
        read_response(json.dumps(obj))  # text is not read as JSON
    with pytest.raises(InvalidParams, match="^/message/metadata/hitl_response_for: .*extra"):
        read_response({**obj, "extra": 1})


# --- properties ------------------------------------------------------------------------------

responder = st.one_of(
    st.just("any"),
    st.from_regex(r"specific:[^\s]{1,12}", fullmatch=True),
    st.integers(1, 99).map(lambda n: f"consensus:{n}"),
)
simple_schema = st.fixed_dictionaries(
    {"type": st.just("object"), "additionalProperties": st.just(False)},
    optional={
        "properties": st.dictionaries(
            st.text(min_size=1, max_size=6),
            st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]),
            max_size=4,
        ),
        "title": st.text(max_size=20),
    },
)
deadline = st.datetimes(
    min_value=datetime(2026, 5, 10), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc)
).map(lambda d: d.isoformat().replace("+00:00", "Z"))
valid_envelopes = st.fixed_dictionaries(
    {
        "prompt_id": st.sampled_from([1, 3, 4, 5]).flatmap(lambda v: st.uuids(version=v).map(str)),
        "prompt": st.text(min_size=1, max_size=300),
        "response_schema": simple_schema,
    },
    optional={
        "deadline": deadline,
        "allowed_responders": st.lists(responder, min_size=1, max_size=4),
    },
)


@pytest.mark.property
@settings(max_examples=200, deadline=None)
@given(valid_envelopes)
def test_random_valid_envelopes_pass_strict_and_round_trip(obj):
    env = PromptEnvelope.from_json(obj, now=NOW)
    assert env.to_json() == obj
    assert PromptEnvelope.from_json(env.to_json(), now=NOW) == env
    assert [f for f in env.findings if f.severity == "error"] == []


@pytest.mark.property
@settings(max_examples=200, deadline=None)
@given(valid_envelopes, st.sampled_from(MUTATIONS))
def test_each_single_mutation_fails_strict_naming_its_member(obj, mutation):
    _, mutate, pointer = mutation
    if pointer.startswith("/response_schema") or pointer.startswith("/deadline"):
        obj.setdefault("deadline", "2030-01-01T00:00:00Z")
    mutate(obj)
    assert pointer in errors(check_prompt(obj, now=NOW))


@pytest.mark.property
@settings(max_examples=200, deadline=None)
@given(valid_envelopes, st.lists(st.text(max_size=12), min_size=1, max_size=4))
def test_orchestrator_never_refuses_for_responder_patterns(obj, responders):
    obj["allowed_responders"] = responders
    env = PromptEnvelope.from_json(obj, mode="orchestrator", now=NOW)
    assert len(env.responders) == len(responders)


# The bundled schema files and the code agree on what they can both express.
@pytest.mark.property
@settings(max_examples=200, deadline=None)
@given(valid_envelopes, st.sampled_from(MUTATIONS + [("none", lambda e: None, "")]))
def test_bundled_schema_agrees_with_the_strict_check(obj, mutation):
    _, mutate, pointer = mutation
    code_only = {"/response_schema", "/response_schema/$schema", "/deadline"}
    if pointer in code_only:  # size, schema validity, dialect, clock: not expressible
        return
    mutate(obj)
    validator = Draft202012Validator(spec.bundled_schema("envelope"), format_checker=FORMAT_CHECKER)
    by_schema = validator.is_valid(obj)
    by_code = not errors(check_prompt(obj, now=NOW))
    assert by_schema == by_code


def test_bundled_response_schema():
    schema = spec.bundled_schema("response")
    good = {"prompt_id": PROMPT["prompt_id"], "payload": {}}
    assert Draft202012Validator(schema).is_valid(good)
    assert not Draft202012Validator(schema).is_valid({**good, "x": 1})


@pytest.mark.parametrize("dialect", [5, True, [], {}], ids=["number", "bool", "list", "object"])
@pytest.mark.parametrize("mode", ["strict", "orchestrator"])
def test_a_dialect_that_is_not_a_string_is_a_finding(dialect, mode):
    # Raised AttributeError ('int' object has no attribute 'rstrip') or TypeError.
    env = copy.deepcopy(PROMPT)
    env["response_schema"]["$schema"] = dialect
    with pytest.raises(MalformedPrompt) as info:
        PromptEnvelope.from_json(env, mode=mode, now=NOW)
    assert "/response_schema" in errors(info.value.findings)
    assert "$schema must be a string" in str(info.value)


def test_unknown_members_are_named_by_an_escaped_pointer():
    env = copy.deepcopy(PROMPT)
    env["a/b~c"] = 1
    assert "/a~1b~0c" in errors(check_prompt(env, now=NOW))
    assert "/x~1y" in errors(
        check_response({"prompt_id": PROMPT["prompt_id"], "payload": {}, "x/y": 0})
    )
