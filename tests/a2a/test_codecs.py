"""A2A 1.0 and 0.3 codecs: vectors, round trips, and errors that name the member."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hitl_nb.a2a import CODEC_V03, CODEC_V1, Codec
from hitl_nb.a2a._model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from hitl_nb.errors import WireDecodeError

URI = "https://agentic-sandbox.aiwg.io/extensions/hitl-prompt/v1"
PROMPT_ID = "0b8a4f5e-3c1d-4e2f-9a7b-6c5d4e3f2a10"
ENVELOPE = {
    "prompt_id": PROMPT_ID,
    "prompt": "Ship build 41 to the staging cluster?",
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
    "deadline": "2031-01-02T03:04:05Z",
    "allowed_responders": ["specific:ops-lead@example.org"],
}

# Shaped like the extension's prompt-event example, in A2A 0.3 spelling.
V03_PROMPT_EVENT = {
    "kind": "status-update",
    "taskId": "task-41",
    "contextId": "ctx-staging",
    "status": {
        "state": "input-required",
        "message": {
            "kind": "message",
            "messageId": "m-agent-1",
            "role": "agent",
            "parts": [{"kind": "text", "text": "Waiting for approval of build 41."}],
            "metadata": {URI: ENVELOPE},
            "extensions": [URI],
        },
        "timestamp": "2030-12-31T10:00:00Z",
    },
    "final": True,
}

# The same event in A2A 1.0 spelling, inside its StreamResponse wrapper.
V1_PROMPT_EVENT = {
    "statusUpdate": {
        "taskId": "task-41",
        "contextId": "ctx-staging",
        "status": {
            "state": "TASK_STATE_INPUT_REQUIRED",
            "message": {
                "messageId": "m-agent-1",
                "role": "ROLE_AGENT",
                "parts": [{"text": "Waiting for approval of build 41."}],
                "metadata": {URI: ENVELOPE},
                "extensions": [URI],
            },
            "timestamp": "2030-12-31T10:00:00Z",
        },
    }
}

# Shaped like the extension's response-message example (A2A 0.3).
V03_RESPONSE = {
    "kind": "message",
    "messageId": "m-user-7",
    "taskId": "task-41",
    "contextId": "ctx-staging",
    "role": "user",
    "parts": [{"kind": "text", "text": "Go ahead."}],
    "metadata": {
        "hitl_response_for": {
            "prompt_id": PROMPT_ID,
            "payload": {"approved": True, "comment": "smoke tests green"},
        }
    },
}


def test_v03_prompt_event_decodes_and_reencodes_identically() -> None:
    event = CODEC_V03.decode_stream_response(V03_PROMPT_EVENT)
    assert isinstance(event, TaskStatusUpdateEvent)
    assert event.status.state is TaskState.INPUT_REQUIRED
    assert event.final_hint is True
    assert event.status.message is not None
    assert event.status.message.metadata == {URI: ENVELOPE}
    assert CODEC_V03.encode_stream_response(event) == V03_PROMPT_EVENT


def test_v1_prompt_event_is_the_same_event() -> None:
    v1 = CODEC_V1.decode_stream_response(V1_PROMPT_EVENT)
    v03 = CODEC_V03.decode_stream_response(V03_PROMPT_EVENT)
    assert isinstance(v1, TaskStatusUpdateEvent) and isinstance(v03, TaskStatusUpdateEvent)
    assert v1.final_hint is None
    v1.final_hint = True
    assert v1 == v03
    assert CODEC_V1.encode_stream_response(v03) == V1_PROMPT_EVENT


def test_reference_kind_spelling_task_status_update_is_read() -> None:
    event = dict(V03_PROMPT_EVENT, kind="task-status-update")
    assert isinstance(CODEC_V03.decode_stream_response(event), TaskStatusUpdateEvent)


def test_v03_response_message_round_trip() -> None:
    msg = CODEC_V03.decode_message(V03_RESPONSE)
    assert msg.role is Role.USER
    assert msg.task_id == "task-41"
    assert msg.metadata is not None and "hitl_response_for" in msg.metadata
    assert CODEC_V03.encode_message(msg) == V03_RESPONSE
    assert CODEC_V1.encode_message(msg)["role"] == "ROLE_USER"
    assert "kind" not in CODEC_V1.encode_message(msg)


def test_send_results() -> None:
    task = Task("t", "c", TaskStatus(TaskState.WORKING))
    assert CODEC_V1.encode_send_result(task) == {
        "task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}
    }
    assert CODEC_V03.encode_send_result(task)["kind"] == "task"
    assert CODEC_V1.decode_send_result(CODEC_V1.encode_send_result(task)) == task
    assert CODEC_V03.decode_send_result(CODEC_V03.encode_send_result(task)) == task
    with pytest.raises(WireDecodeError, match="task or a message"):
        CODEC_V1.decode_send_result(V1_PROMPT_EVENT)
    with pytest.raises(WireDecodeError, match="task or a message"):
        CODEC_V03.decode_send_result(V03_PROMPT_EVENT)


def test_file_parts_in_v03() -> None:
    raw = Part(raw=b"\x00\x01hi", filename="a.bin", media_type="application/octet-stream")
    enc = CODEC_V03.encode_part(raw)
    assert enc == {
        "kind": "file",
        "file": {"bytes": "AAFoaQ==", "name": "a.bin", "mimeType": "application/octet-stream"},
    }
    assert CODEC_V03.decode_part(enc) == raw
    url = Part(url="https://example.org/x.pdf", media_type="application/pdf")
    assert CODEC_V03.decode_part(CODEC_V03.encode_part(url)) == url
    with pytest.raises(ValueError, match="object only"):
        CODEC_V03.encode_part(Part(data=[1, 2]))
    with pytest.raises(ValueError, match="unspecified role"):
        CODEC_V03.encode_message(Message("m", Role.UNSPECIFIED, []))


def test_v1_raw_part_accepts_urlsafe_and_unpadded_base64() -> None:
    assert CODEC_V1.decode_part({"raw": "-_8"}).raw == b"\xfb\xff"
    assert CODEC_V1.decode_part({"raw": "AAFoaQ"}).raw == b"\x00\x01hi"


def _card() -> AgentCard:
    return AgentCard(
        name="mock",
        description="a mock",
        version="0.1.0",
        supported_interfaces=[
            AgentInterface("http://127.0.0.1:1/a2a/jsonrpc", "JSONRPC", "1.0"),
            AgentInterface("http://127.0.0.1:1/a2a/rest", "HTTP+JSON", "1.0"),
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            extensions=[AgentExtension(URI, "Structured HITL prompt envelope", False, {})],
        ),
        skills=[AgentSkill("approval", "Approval", "asks yes/no", ["hitl"], ["approval"])],
    )


def test_agent_card_v1_writes_required_and_params_out() -> None:
    enc = CODEC_V1.encode_agent_card(_card())
    ext = enc["capabilities"]["extensions"][0]
    assert ext == {
        "uri": URI,
        "description": "Structured HITL prompt envelope",
        "required": False,
        "params": {},
    }
    assert enc["capabilities"]["pushNotifications"] is False
    assert enc["supportedInterfaces"][1]["protocolBinding"] == "HTTP+JSON"
    back = CODEC_V1.decode_agent_card(json.loads(json.dumps(enc)))
    assert back == _card()
    assert back.raw == enc


def test_agent_card_v03_round_trip() -> None:
    enc = CODEC_V03.encode_agent_card(_card())
    assert enc["url"] == "http://127.0.0.1:1/a2a/jsonrpc"
    assert enc["preferredTransport"] == "JSONRPC"
    back = CODEC_V03.decode_agent_card(enc)
    assert [i.protocol_binding for i in back.supported_interfaces] == ["JSONRPC", "HTTP+JSON"]
    assert back.capabilities.extensions == _card().capabilities.extensions


BAD_V1 = [
    ("decode_message", [], "", "expected an object, got an array"),
    ("decode_message", {"role": "ROLE_USER", "parts": []}, "/messageId", "required"),
    ("decode_message", {"messageId": 1, "role": "ROLE_USER", "parts": []}, "/messageId", "string"),
    ("decode_message", {"messageId": "m", "role": "user", "parts": []}, "/role", "unknown role"),
    ("decode_message", {"messageId": "m", "role": "ROLE_USER", "parts": {}}, "/parts", "array"),
    (
        "decode_message",
        {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": 3}]},
        "/parts/0/text",
        "string",
    ),
    (
        "decode_message",
        {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a", "url": "b"}]},
        "/parts/0",
        "exactly one",
    ),
    (
        "decode_message",
        {"messageId": "m", "role": "ROLE_USER", "parts": [], "metadata": []},
        "/metadata",
        "object",
    ),
    ("decode_part", {"raw": "***"}, "/raw", "base64"),
    ("decode_task", {"id": "t", "status": {"state": "working"}}, "/status/state", "task state"),
    ("decode_task", {"id": "t"}, "/status", "required"),
    ("decode_stream_response", {}, "", "exactly one"),
    ("decode_stream_response", {"task": {}, "message": {}}, "", "exactly one"),
    (
        "decode_artifact_update",
        {"taskId": "t", "artifact": {"artifactId": "a", "parts": []}, "append": "yes"},
        "/append",
        "boolean",
    ),
    (
        "decode_agent_card",
        {"name": "n", "supportedInterfaces": [{"url": "u"}]},
        "/supportedInterfaces/0/protocolBinding",
        "required",
    ),
]


@pytest.mark.parametrize(("func", "value", "pointer", "words"), BAD_V1)
def test_v1_errors_name_the_member(func: str, value: Any, pointer: str, words: str) -> None:
    with pytest.raises(WireDecodeError, match=words) as info:
        getattr(CODEC_V1, func)(value)
    assert info.value.pointer == pointer


BAD_V03 = [
    ("decode_message", {"kind": "task", "messageId": "m", "role": "user", "parts": []}, "/kind"),
    ("decode_message", {"messageId": "m", "role": "ROLE_USER", "parts": []}, "/role"),
    ("decode_part", {"kind": "data", "data": [1]}, "/data"),
    ("decode_part", {"kind": "file", "file": {}}, "/file"),
    ("decode_part", {"kind": "video"}, "/kind"),
    ("decode_status", {"state": "TASK_STATE_WORKING"}, "/state"),
    ("decode_stream_response", {"kind": "nope"}, "/kind"),
    (
        "decode_status_update",
        {"kind": "status-update", "taskId": "t", "status": {"state": "working"}, "final": "no"},
        "/final",
    ),
    ("decode_agent_card", {"name": "n"}, "/url"),
]


@pytest.mark.parametrize(("func", "value", "pointer"), BAD_V03)
def test_v03_errors_name_the_member(func: str, value: Any, pointer: str) -> None:
    with pytest.raises(WireDecodeError) as info:
        getattr(CODEC_V03, func)(value)
    assert info.value.pointer == pointer


# -- property tests: encode then decode gives the same object ----------------------------

_ids = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=8)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_meta = st.none() | st.dictionaries(st.text(max_size=6), _json, min_size=1, max_size=3)
_part = st.one_of(
    st.builds(Part, text=st.text(max_size=10), metadata=_meta),
    st.builds(Part, data=st.dictionaries(st.text(max_size=4), _json, max_size=3), metadata=_meta),
    st.builds(
        Part, raw=st.binary(max_size=10), filename=st.none() | _ids, media_type=st.none() | _ids
    ),
    st.builds(Part, url=_ids, filename=st.none() | _ids, media_type=st.none() | _ids),
)
_message = st.builds(
    Message,
    message_id=_ids,
    role=st.sampled_from([Role.USER, Role.AGENT]),
    parts=st.lists(_part, max_size=3),
    task_id=st.none() | _ids,
    context_id=st.none() | _ids,
    metadata=_meta,
    extensions=st.lists(_ids, max_size=2),
    reference_task_ids=st.lists(_ids, max_size=2),
)
_status = st.builds(
    TaskStatus,
    state=st.sampled_from(list(TaskState)),
    message=st.none() | _message,
    timestamp=st.none() | st.just("2030-01-01T00:00:00Z"),
)
_artifact = st.builds(
    Artifact,
    artifact_id=_ids,
    parts=st.lists(_part, max_size=2),
    name=st.none() | _ids,
    description=st.none() | _ids,
    metadata=_meta,
    extensions=st.lists(_ids, max_size=2),
)
_task = st.builds(
    Task,
    id=_ids,
    context_id=_ids,
    status=_status,
    artifacts=st.lists(_artifact, max_size=2),
    history=st.lists(_message, max_size=2),
    metadata=_meta,
)
_event = st.one_of(
    _task,
    _message,
    st.builds(
        TaskStatusUpdateEvent,
        task_id=_ids,
        context_id=_ids,
        status=_status,
        metadata=_meta,
        final_hint=st.booleans(),
    ),
    st.builds(
        TaskArtifactUpdateEvent,
        task_id=_ids,
        context_id=_ids,
        artifact=_artifact,
        append=st.booleans(),
        last_chunk=st.booleans(),
        metadata=_meta,
    ),
)


@pytest.mark.property
@pytest.mark.parametrize("codec", [CODEC_V1, CODEC_V03], ids=["v1", "v03"])
@settings(max_examples=60, deadline=None)
@given(event=_event)
def test_stream_events_round_trip(codec: Codec, event: Any) -> None:
    wire = json.loads(json.dumps(codec.encode_stream_response(event)))
    back = codec.decode_stream_response(wire)
    if isinstance(event, TaskStatusUpdateEvent) and codec is CODEC_V1:
        back.final_hint = event.final_hint  # 1.0 has no final flag
    assert back == event
