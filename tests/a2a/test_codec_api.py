"""Both wire versions are one typed Codec class, documented, told what differs by a Dialect."""

from __future__ import annotations

import inspect

import pytest

from hitl_nb.a2a import CODEC_V03, CODEC_V1, Codec, _codec_v03, _codec_v1, codec_for
from hitl_nb.a2a._model import Message, Part, Role, Task, TaskState, TaskStatus
from hitl_nb.errors import WireDecodeError


def _public_methods() -> dict[str, object]:
    return {
        name: member
        for name, member in inspect.getmembers(Codec, inspect.isfunction)
        if not name.startswith("_")
    }


def test_every_codec_method_is_documented_and_typed() -> None:
    methods = _public_methods()
    assert {"encode_task", "decode_stream_response", "decode_agent_card"} <= set(methods)
    for name, method in methods.items():
        assert inspect.getdoc(method), f"Codec.{name} has no docstring"
        hints = inspect.signature(method)
        assert hints.return_annotation is not inspect.Signature.empty, name
    assert str(inspect.signature(Codec.decode_message)) == (
        "(self, value: 'Any', pointer: 'str' = '') -> 'Message'"
    )


def test_each_version_is_a_codec_and_its_module_exports_no_bound_methods() -> None:
    for module, codec, version in ((_codec_v1, CODEC_V1, "1.0"), (_codec_v03, CODEC_V03, "0.3")):
        assert isinstance(codec, Codec) and codec.version == version
        assert codec_for(version) is codec and repr(codec) == f"<Codec A2A {version}>"
        assert module.CODEC is codec
        for name in module.__all__:
            assert not inspect.ismethod(getattr(module, name)), f"{module.__name__}.{name}"


def test_state_and_role_tables_are_inverse() -> None:
    for module, codec in ((_codec_v1, CODEC_V1), (_codec_v03, CODEC_V03)):
        for state, word in module.STATE_TO_WIRE.items():
            assert codec.states_from_wire[word] is state
            assert codec.state_from_wire(word) is state
            assert codec.state_to_wire(state) == word
    assert CODEC_V1.roles_from_wire == {v: k for k, v in _codec_v1.ROLE_TO_WIRE.items()}
    assert CODEC_V03.roles_from_wire == {"user": Role.USER, "agent": Role.AGENT}


def test_the_versions_do_not_leak_into_each_other() -> None:
    msg = Message("m", Role.USER, [Part(text="hi")])
    task = Task("t", "c", TaskStatus(TaskState.INPUT_REQUIRED, msg))
    assert "kind" not in CODEC_V1.encode_task(task)
    assert "kind" not in CODEC_V1.encode_task(task)["status"]["message"]
    assert CODEC_V03.encode_task(task)["status"]["message"]["kind"] == "message"
    # 1.0 ignores a kind it does not know; 0.3 checks it.
    wrong_kind = dict(CODEC_V1.encode_message(msg), kind="task")
    assert CODEC_V1.decode_message(wrong_kind) == msg
    with pytest.raises(WireDecodeError) as info:
        CODEC_V03.decode_message(dict(CODEC_V03.encode_message(msg), kind="task"))
    assert info.value.pointer == "/kind"


def test_v03_event_kind_that_is_not_a_string_is_a_decode_error() -> None:
    with pytest.raises(WireDecodeError, match="expected kind task, message") as info:
        CODEC_V03.decode_stream_response({"kind": ["task"]}, "/result")
    assert info.value.pointer == "/result/kind"
