"""Push-notification configurations in both wire versions: round trips, and decoding
untrusted JSON names the member that was wrong."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb.a2a import PushConfig, decode_push_config, decode_send_push_config, encode_push_config
from hitl_nb.errors import WireDecodeError

text = st.text(min_size=1, max_size=40)
configs = st.builds(
    PushConfig,
    url=text,
    id=st.none() | text,
    task_id=st.none() | text,
    token=st.none() | text,
    auth_scheme=st.none() | text,
    auth_credentials=st.none() | text,
)


def _comparable(config: PushConfig) -> PushConfig:
    # Credentials without a scheme are not sent: no authentication object carries them.
    if config.auth_scheme is None:
        config.auth_credentials = None
    return config


@pytest.mark.property
@given(configs, st.sampled_from(["1.0", "0.3"]))
def test_round_trip(config: PushConfig, version: Any) -> None:
    wire = encode_push_config(config, version)
    assert decode_push_config(wire, version) == _comparable(config)


def test_the_two_spellings() -> None:
    config = PushConfig(
        "https://h/x", id="c", task_id="t", token="k", auth_scheme="Bearer", auth_credentials="s"
    )
    assert encode_push_config(config, "1.0") == {
        "id": "c",
        "taskId": "t",
        "url": "https://h/x",
        "token": "k",
        "authentication": {"scheme": "Bearer", "credentials": "s"},
    }
    assert encode_push_config(config, "0.3") == {
        "taskId": "t",
        "pushNotificationConfig": {
            "id": "c",
            "url": "https://h/x",
            "token": "k",
            "authentication": {"schemes": ["Bearer"], "credentials": "s"},
        },
    }
    assert config.authorization() == "Bearer s"
    # SendMessage's configuration carries the inner object in both versions.
    assert decode_send_push_config({"url": "https://h/x", "token": "k"}, "0.3").token == "k"


@pytest.mark.parametrize(
    ("value", "version", "pointer"),
    [
        ([], "1.0", ""),
        ({}, "1.0", "/url"),
        ({"url": ""}, "1.0", "/url"),
        ({"url": 3}, "1.0", "/url"),
        ({"url": "https://h", "token": 5}, "1.0", "/token"),
        (
            {"url": "https://h", "authentication": {"credentials": "x"}},
            "1.0",
            "/authentication/scheme",
        ),
        ({"url": "https://h", "authentication": "Bearer"}, "1.0", "/authentication"),
        ({"taskId": "t"}, "0.3", "/pushNotificationConfig"),
        (
            {"pushNotificationConfig": {"url": "https://h", "authentication": {"schemes": "B"}}},
            "0.3",
            "/pushNotificationConfig/authentication/schemes",
        ),
    ],
)
def test_bad_json_names_the_member(value: Any, version: Any, pointer: str) -> None:
    with pytest.raises(WireDecodeError) as info:
        decode_push_config(value, version)
    assert info.value.pointer == pointer, str(info.value)


@pytest.mark.property
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "url",
                        "token",
                        "id",
                        "taskId",
                        "authentication",
                        "scheme",
                        "pushNotificationConfig",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=10,
    ),
    st.sampled_from(["1.0", "0.3"]),
)
def test_any_json_decodes_or_fails_cleanly(value: Any, version: Any) -> None:
    try:
        decoded = decode_push_config(value, version)
    except WireDecodeError:
        return
    assert isinstance(decoded.url, str) and decoded.url
