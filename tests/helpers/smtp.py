"""A real SMTP server for tests: aiosmtpd on 127.0.0.1, in a thread, with a throwaway
certificate for STARTTLS and implicit TLS.

:func:`smtp_server` starts one (port 0, or a given port so a test can stop the server
and start it again where the sender expects it) and stops it after; the server's
:class:`Inbox` keeps every message it accepted, and can be told to refuse recipients
(``refuse``: address -> SMTP reply) or whole messages (``reply``). :func:`throwaway_cert`
makes a self-signed certificate for ``127.0.0.1`` and ``localhost`` with
``cryptography``.

aiosmtpd 1.4 warns as it serves a login (a deprecated ``Session.login_data`` it sets
itself) and, for implicit TLS, that AUTH does not wait for STARTTLS (it counts only
STARTTLS as TLS): a test module that logs in adds :data:`AIOSMTPD_WARNINGS` to its
``pytestmark``.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

#: The warnings aiosmtpd gives about itself while it serves a login.
AIOSMTPD_WARNINGS = [
    pytest.mark.filterwarnings("ignore:Session.login_data is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning"),
]


@dataclass(frozen=True)
class Cert:
    """A certificate and its key (PEM files); ``cert`` is also the CA a client trusts."""

    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        return context


def throwaway_cert(folder: Path) -> Cert:
    """A self-signed certificate for 127.0.0.1 and localhost, valid for a day."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hitl-nb test SMTP")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return Cert(cert_file, key_file)


@dataclass
class Received:
    """One message the server accepted."""

    mail_from: str
    rcpt_tos: list[str]
    data: bytes
    tls: bool
    login: str | None

    @property
    def message(self) -> EmailMessage:
        parsed = message_from_bytes(self.data, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        return parsed

    def header_block(self) -> str:
        """The raw header section, as it came over the wire."""
        return self.data.split(b"\r\n\r\n", 1)[0].decode("ascii")


@dataclass
class Inbox:
    """The server's handler: what it accepted, and what it is told to refuse."""

    received: list[Received] = field(default_factory=list)
    refuse: dict[str, str] = field(default_factory=dict)
    reply: str | None = None
    logins: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_RCPT(  # noqa: N802 - aiosmtpd's hook name
        self, server: Any, session: Any, envelope: Any, address: str, options: Any
    ) -> str:
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(  # noqa: N802 - aiosmtpd's hook name
        self, server: Any, session: Any, envelope: Any
    ) -> str:
        if self.reply is not None:
            return self.reply
        auth = session.auth_data
        login = auth.login.decode() if isinstance(auth, LoginPassword) else None
        with self.lock:
            self.received.append(
                Received(
                    envelope.mail_from,
                    list(envelope.rcpt_tos),
                    bytes(envelope.original_content or envelope.content),
                    session.ssl is not None,
                    login,
                )
            )
        return "250 Message accepted"


class _Controller(Controller):
    """aiosmtpd's controller, on the port the system gives (port 0), that hangs up on
    the clients still connected when it stops.

    aiosmtpd stops by cancelling its tasks and closing its loop at once: a connection
    after STARTTLS needs more turns of the loop to close its TLS layer, so its socket
    was left open (a ResourceWarning whenever it is collected, in whichever test).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sessions: list[SMTP] = []

    def factory(self) -> SMTP:
        smtp = super().factory()
        self._sessions.append(smtp)
        return smtp

    def _trigger_server(self) -> None:
        assert self.server is not None
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()

    def stop(self, no_assert: bool = False) -> None:
        if self._thread is not None and self.loop.is_running():
            asyncio.run_coroutine_threadsafe(self._hang_up(), self.loop).result(timeout=30)
        super().stop(no_assert)

    async def _hang_up(self) -> None:
        for smtp in self._sessions:
            # The TLS layer's transport and the socket's under it (after STARTTLS).
            for transport in (smtp.transport, smtp._original_transport):
                if transport is not None and not transport.is_closing():
                    transport.abort()
        await asyncio.sleep(0)  # their connection_lost callbacks run


@dataclass
class SmtpServer:
    """A running server: where it is, and its :class:`Inbox`."""

    host: str
    port: int
    inbox: Inbox


@contextmanager
def smtp_server(
    *,
    security: str = "none",
    cert: Cert | None = None,
    users: dict[str, str] | None = None,
    port: int = 0,
    inbox: Inbox | None = None,
) -> Iterator[SmtpServer]:
    """An SMTP server on 127.0.0.1 (see the module docstring); ``security``: ``none``,
    ``starttls`` (required before anything else) or ``tls``; ``users``: logins it takes
    (then required)."""
    inbox = inbox or Inbox()
    kwargs: dict[str, Any] = {}
    if security in ("starttls", "tls"):
        assert cert is not None, "TLS needs a certificate (throwaway_cert)"
    if security == "starttls":
        assert cert is not None
        kwargs.update(tls_context=cert.server_context(), require_starttls=True)
    if security == "tls":
        assert cert is not None
        kwargs.update(ssl_context=cert.server_context())
    if users:

        def check(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
            if isinstance(data, LoginPassword):
                login, password = data.login.decode(), data.password.decode()
                inbox.logins.append((login, password))
                ok = users.get(login) == password
                return AuthResult(success=ok, handled=False, auth_data=data)
            return AuthResult(success=False, handled=False)

        kwargs.update(
            authenticator=check,
            auth_required=True,
            auth_require_tls=security == "starttls",
        )
    controller = _Controller(inbox, hostname="127.0.0.1", port=port, **kwargs)
    controller.start()
    try:
        yield SmtpServer("127.0.0.1", controller.port, inbox)
    finally:
        controller.stop()
