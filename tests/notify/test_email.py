"""Email through a real SMTP server (aiosmtpd on 127.0.0.1): STARTTLS and implicit TLS
with a throwaway certificate, logins, refusals, outages, and hostile prompt text."""

from __future__ import annotations

import asyncio
import gc
import logging
import smtplib
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify import (
    AnswerLinks,
    Batch,
    EmailChannel,
    PromptFacts,
    Secret,
    SmtpSettings,
    TeamChannels,
    opened_notes,
)
from hitl_nb.notify._email import EmailTarget
from hitl_nb.notify._messages import Message, compose
from tests.helpers.ports import free_port
from tests.helpers.smtp import AIOSMTPD_WARNINGS, Cert, smtp_server, throwaway_cert
from tests.helpers.until import until_async

pytestmark = AIOSMTPD_WARNINGS

PASSWORD = "pa55-w0rd-never-shown"
NOW = 1_767_225_600.0
LINKS = AnswerLinks("https://hub.example.org/", hub=True)
BOB = EmailTarget("bob@example.org")


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> Cert:
    return throwaway_cert(tmp_path_factory.mktemp("smtp-cert"))


@pytest.fixture
def password(monkeypatch: pytest.MonkeyPatch) -> Secret:
    monkeypatch.setenv("HITL_TEST_SMTP_PASSWORD", PASSWORD)
    return Secret(env="HITL_TEST_SMTP_PASSWORD")


def message(question: str = "Deploy build 42 to production?", **kw: Any) -> Message:
    facts = PromptFacts(
        "r1",
        "p1",
        "https://agent.example.org/",
        question,
        registered_by=kw.pop("registered_by", "Alice"),
        deadline=NOW + 1800,
        specific=("bob",),
    )
    note = opened_notes(facts, TeamChannels(), NOW)[0]
    return compose(Batch(note.recipient, "t", (note,), 1), LINKS, NOW)


def channel(port: int, **kw: Any) -> EmailChannel:
    settings = dict(host="127.0.0.1", port=port, sender="hitl@example.org", helo="test.invalid")
    settings.update(kw)
    return EmailChannel(SmtpSettings(**settings), threads=2)


def deliver(ch: EmailChannel, msg: Message, target: EmailTarget = BOB) -> None:
    async def go() -> None:
        try:
            await ch.deliver(msg, target)
        finally:
            await ch.aclose()

    asyncio.run(go())


def test_starttls_with_a_login(cert: Cert, password: Secret, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    with smtp_server(security="starttls", cert=cert, users={"hitl": PASSWORD}) as server:
        ch = channel(
            server.port, security="starttls", user="hitl", password=password, ca_file=str(cert.cert)
        )
        msg = message()
        deliver(ch, msg)
    (got,) = server.inbox.received
    assert got.tls and got.login == "hitl"
    assert got.mail_from == "hitl@example.org" and got.rcpt_tos == ["bob@example.org"]
    mail = got.message
    assert mail["Subject"] == "Question for you: Deploy build 42 to production?"
    assert mail["Message-ID"] == f"<{msg.key}@example.org>"
    assert mail["Auto-Submitted"] == "auto-generated"
    plain = mail.get_body(("plain",))
    html = mail.get_body(("html",))
    assert plain is not None and html is not None
    assert plain.get_content().replace("\r\n", "\n") == msg.plain()
    assert "user-redirect/lab?hitl-registration=r1&amp;hitl-prompt=p1" in html.get_content()
    assert PASSWORD not in caplog.text and PASSWORD not in repr(ch.settings)


def test_implicit_tls(cert: Cert, password: Secret):
    with smtp_server(security="tls", cert=cert, users={"hitl": PASSWORD}) as server:
        ch = channel(
            server.port, security="tls", user="hitl", password=password, ca_file=str(cert.cert)
        )
        deliver(ch, message())
    (got,) = server.inbox.received
    assert got.login == "hitl"


def test_plain_smtp_on_this_machine():
    with smtp_server() as server:
        deliver(channel(server.port, security="none"), message())
    assert len(server.inbox.received) == 1


def test_the_same_message_keeps_its_message_id():
    with smtp_server() as server:
        msg = message()
        deliver(channel(server.port, security="none"), msg)
        deliver(channel(server.port, security="none"), msg)
    ids = {r.message["Message-ID"] for r in server.inbox.received}
    assert ids == {f"<{msg.key}@example.org>"}


def test_a_certificate_nobody_vouches_for_is_refused(cert: Cert, password: Secret):
    with smtp_server(security="starttls", cert=cert, users={"hitl": PASSWORD}) as server:
        ch = channel(server.port, security="starttls", user="hitl", password=password)
        with pytest.raises(DeliveryFailed, match="TLS with the SMTP server") as caught:
            deliver(ch, message())
    assert not caught.value.permanent and server.inbox.received == []
    assert server.inbox.logins == []  # the password never left


def test_a_wrong_password_is_retried_and_never_shown(cert: Cert, monkeypatch):
    monkeypatch.setenv("HITL_TEST_SMTP_PASSWORD", "wrong-" + PASSWORD)
    secret = Secret(env="HITL_TEST_SMTP_PASSWORD")
    with smtp_server(security="starttls", cert=cert, users={"hitl": PASSWORD}) as server:
        ch = channel(
            server.port, security="starttls", user="hitl", password=secret, ca_file=str(cert.cert)
        )
        with pytest.raises(DeliveryFailed, match="refused the login of 'hitl'") as caught:
            deliver(ch, message())
    assert not caught.value.permanent
    assert PASSWORD not in str(caught.value)


def test_a_missing_password_waits_for_the_administrator(cert: Cert, monkeypatch):
    monkeypatch.delenv("HITL_TEST_SMTP_PASSWORD", raising=False)
    with smtp_server(security="starttls", cert=cert, users={"hitl": PASSWORD}) as server:
        ch = channel(
            server.port,
            security="starttls",
            user="hitl",
            password=Secret(env="HITL_TEST_SMTP_PASSWORD"),
            ca_file=str(cert.cert),
        )
        with pytest.raises(DeliveryFailed, match="HITL_TEST_SMTP_PASSWORD is not set") as caught:
            deliver(ch, message())
    assert not caught.value.permanent


@pytest.mark.parametrize(
    ("refuse", "reply", "permanent"),
    [
        pytest.param({"bob@example.org": "550 no such user"}, None, True, id="rcpt-550"),
        pytest.param({"bob@example.org": "450 mailbox busy"}, None, False, id="rcpt-450"),
        pytest.param({}, "554 content rejected", True, id="data-554"),
        pytest.param({}, "451 try again later", False, id="data-451"),
    ],
)
def test_what_the_server_refuses(refuse, reply, permanent):
    with smtp_server() as server:
        server.inbox.refuse.update(refuse)
        server.inbox.reply = reply
        with pytest.raises(DeliveryFailed) as caught:
            deliver(channel(server.port, security="none"), message())
    assert caught.value.permanent is permanent
    assert "the SMTP server 127.0.0.1:" in str(caught.value)


def test_a_server_that_is_down_is_retried():
    port = free_port()
    with pytest.raises(DeliveryFailed, match="could not be reached") as caught:
        deliver(channel(port, security="none"), message())
    assert not caught.value.permanent


HOSTILE = (
    "Approve?\r\nBcc: victim@example.org\r\nX-Evil: 1\r\n\r\n<script>alert(1)</script>"
    "\x00\x1b[2J\u202e <!channel> https://evil.example"
)


def test_hostile_prompt_text_never_reaches_a_header():
    with smtp_server() as server:
        msg = message(HOSTILE, registered_by="Eve\r\nCc: all@example.org")
        deliver(channel(server.port, security="none"), msg)
    (got,) = server.inbox.received
    assert got.rcpt_tos == ["bob@example.org"]
    names = [
        line.split(":", 1)[0]
        for line in got.header_block().split("\r\n")
        if line and not line[0].isspace()
    ]
    assert names == [
        "From",
        "To",
        "Subject",
        "Date",
        "Message-ID",
        "Auto-Submitted",
        "MIME-Version",
        "Content-Type",
    ]
    mail = got.message
    # Read back as one line, the same words (Python 3.13's folding may leave two spaces
    # where a long subject was folded between encoded words).
    assert mail["Subject"].split() == msg.subject_line().split()
    assert "\n" not in msg.subject_line() and "Bcc" in msg.subject_line()  # as text
    html = mail.get_body(("html",))
    assert html is not None and "<script>" not in html.get_content()
    assert "&lt;script&gt;" in html.get_content()


@pytest.mark.parametrize(
    "kw",
    [
        pytest.param({"security": "none", "host": "smtp.example.org"}, id="plain-off-machine"),
        pytest.param({"security": "ssl"}, id="unknown-security"),
        pytest.param({"port": 0}, id="port"),
        pytest.param({"user": "hitl"}, id="user-without-password"),
        pytest.param({"password": Secret(env="X")}, id="password-without-user"),
        pytest.param({"sender": "Hitl <hitl@example.org>"}, id="sender"),
        pytest.param({"host": "smtp.example.org/25"}, id="host"),
        pytest.param({"user": "a\r\nb", "password": Secret(env="X")}, id="user-crlf"),
    ],
)
def test_settings_that_make_no_sense_are_refused(kw):
    settings = dict(host="smtp.example.org", sender="hitl@example.org")
    settings.update(kw)
    with pytest.raises(NotifyRefused):
        SmtpSettings(**settings)


@pytest.fixture
def holding_server() -> Iterator[tuple[int, threading.Event, threading.Event]]:
    """A server that accepts and says nothing until ``release`` is set, then hangs up."""
    accepted, release = threading.Event(), threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        accepted.set()
        release.wait(60)
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield port, accepted, release
    release.set()
    thread.join(10)
    listener.close()


def test_a_slow_mail_server_never_holds_up_the_event_loop(holding_server):
    port, accepted, release = holding_server
    ch = channel(port, security="none", timeout=60)

    async def meanwhile() -> None:
        await until_async(lambda: _truthy(accepted.is_set()), what="the server to accept")
        release.set()  # only a loop that is not blocked gets here

    async def go() -> None:
        try:
            results = await asyncio.gather(
                ch.deliver(message(), BOB), meanwhile(), return_exceptions=True
            )
        finally:
            await ch.aclose()
        failed = results[0]
        assert isinstance(failed, DeliveryFailed)
        assert "SMTPServerDisconnected" in str(failed)  # hung up on, not timed out

    asyncio.run(go())


async def _truthy(value: bool) -> bool:
    return value


def test_the_message_domain(tmp_path: Path):
    s = SmtpSettings(host="127.0.0.1", sender="hitl@example.org", domain="hub.example.org")
    assert s.message_domain == "hub.example.org"
    assert SmtpSettings(host="127.0.0.1", sender="hitl@example.org").message_domain == (
        "example.org"
    )


def test_the_test_server_hangs_up_on_a_client_still_connected_after_starttls(cert: Cert):
    # aiosmtpd alone left such a connection's socket open when it stopped, and the
    # ResourceWarning failed whichever later test happened to collect it.
    with smtp_server(security="starttls", cert=cert, users={"hitl": PASSWORD}) as server:
        client = smtplib.SMTP(server.host, server.port, timeout=30)
        client.starttls(context=ssl.create_default_context(cafile=str(cert.cert)))
        client.login("hitl", PASSWORD)
    client.close()
    gc.collect()  # an unclosed socket warns here, failing this test
