"""Secrets named by where they live, read at each use, shown nowhere."""

from __future__ import annotations

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import Secret


def test_from_the_environment_read_at_each_use(monkeypatch):
    secret = Secret(env="HITL_TEST_SMTP_PASSWORD")
    monkeypatch.setenv("HITL_TEST_SMTP_PASSWORD", "hunter2")
    assert secret.read() == "hunter2"
    monkeypatch.setenv("HITL_TEST_SMTP_PASSWORD", "rotated")
    assert secret.read() == "rotated"
    assert "hunter2" not in repr(secret) and repr(secret) == "Secret(env='HITL_TEST_SMTP_PASSWORD')"
    monkeypatch.delenv("HITL_TEST_SMTP_PASSWORD")
    with pytest.raises(NotifyRefused, match="HITL_TEST_SMTP_PASSWORD is not set"):
        secret.read()


def test_from_a_file_without_its_newline(tmp_path):
    path = tmp_path / "key"
    path.write_text("s3cret\n")
    secret = Secret(file=str(path))
    assert secret.read() == "s3cret" and "s3cret" not in str(secret)
    path.write_text("")
    with pytest.raises(NotifyRefused, match="is not set or empty"):
        secret.read()
    path.write_bytes(b"x" * 70_000)
    with pytest.raises(NotifyRefused, match="too large"):
        secret.read()
    with pytest.raises(NotifyRefused, match="cannot be read") as caught:
        Secret(file=str(tmp_path / "missing")).read()
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize("kw", [{}, {"env": "A", "file": "/b"}, {"env": ""}, {"env": "A=B"}])
def test_one_place_named_properly(kw):
    with pytest.raises(NotifyRefused):
        Secret(**kw)
