"""The signed webhook, checked as docs/notify.md tells a receiver to check it: the
doc's own Python block is run here, against requests the sender really signs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.notify import sign
from hitl_nb.notify._signature import (
    IDEMPOTENCY_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    signed_headers,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "notify.md"
SECRET = "correct horse battery staple"
NOW = 1_767_225_600


def doc_receiver() -> Any:
    """The ``Receiver`` class of docs/notify.md's receiver block."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    (source,) = [b for b in blocks if "The receiver's check of a hitl-nb signed webhook" in b]
    scope: dict[str, Any] = {}
    exec(compile(source, str(DOC), "exec"), scope)  # noqa: S102 - our own doc's example
    return scope["Receiver"]


def request(body: bytes = b'{"kind":"opened"}', at: int = NOW, key: str = "k" * 64):
    headers = signed_headers(SECRET, at, body, key)
    return {name.lower(): value for name, value in headers.items()}, body


def test_the_headers_the_doc_names():
    headers, _ = request()
    assert set(headers) == {
        TIMESTAMP_HEADER.lower(),
        SIGNATURE_HEADER.lower(),
        IDEMPOTENCY_HEADER.lower(),
    }
    assert headers["x-hitl-timestamp"] == str(NOW)
    assert re.fullmatch(r"v1=[0-9a-f]{64}", headers["x-hitl-signature"])


def test_a_receiver_following_the_doc_accepts_what_we_sign():
    receiver = doc_receiver()(SECRET)
    headers, body = request()
    assert receiver.check(headers, body, now=NOW + 3) == "accept"


def test_and_refuses_a_changed_body_timestamp_or_secret():
    Receiver = doc_receiver()  # noqa: N806
    headers, body = request()
    assert Receiver(SECRET).check(headers, body + b" ", now=NOW) == "reject"
    assert Receiver(SECRET).check(headers, body.replace(b"opened", b"outcome"), now=NOW) == "reject"
    moved = dict(headers, **{"x-hitl-timestamp": str(NOW + 60)})
    assert Receiver(SECRET).check(moved, body, now=NOW + 60) == "reject"
    assert Receiver("another secret").check(headers, body, now=NOW) == "reject"
    forged = dict(headers, **{"x-hitl-signature": sign("another secret", NOW, body)})
    assert Receiver(SECRET).check(forged, body, now=NOW) == "reject"
    for bad in ("", "v1=", "v0=" + headers["x-hitl-signature"][3:]):
        assert Receiver(SECRET).check(
            dict(headers, **{"x-hitl-signature": bad}), body, now=NOW
        ) == ("reject")
    for stamp in ("", "-1", "1e9", " 1767225600"):
        assert Receiver(SECRET).check(
            dict(headers, **{"x-hitl-timestamp": stamp}), body, now=NOW
        ) == ("reject")


@pytest.mark.parametrize("skew", [-301, 301, 10_000])
def test_and_refuses_a_stale_request(skew):
    headers, body = request()
    assert doc_receiver()(SECRET).check(headers, body, now=NOW + skew) == "reject"


def test_and_tells_a_replay_or_a_retry_from_a_new_message():
    receiver = doc_receiver()(SECRET)
    headers, body = request()
    assert receiver.check(headers, body, now=NOW) == "accept"
    assert receiver.check(headers, body, now=NOW + 10) == "duplicate"  # replayed as is
    retry, _ = request(at=NOW + 240)  # our retry: signed again, the same key
    assert receiver.check(retry, body, now=NOW + 240) == "duplicate"
    other, _ = request(key="f" * 64)
    assert receiver.check(other, body, now=NOW + 20) == "accept"
