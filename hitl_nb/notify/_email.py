"""Email over SMTP: the standard library's client, on threads of its own. The channel
kind ``email``: an :class:`EmailTarget` is a person's address (from the
:class:`~hitl_nb.notify.AddressBook`), never a setting's URL.

:class:`SmtpSettings` is what the administrator sets: the server (``host``, ``port``),
how the connection is protected (``starttls``: plain, then STARTTLS, the submission
port 587's way; ``tls``: TLS from the first byte, port 465; ``none``: only to a server
on this machine), who logs in (``user``, and the password as a
:class:`~hitl_nb.notify.Secret`: an environment variable or a file, read at each
connection, never on a command line or in a log), and who the mail is from. The
server's certificate is always checked (the system's CAs, or ``ca_file``); there is no
setting to turn that off.

:class:`EmailChannel` sends each message on one connection, on a small pool of its
own threads (``smtplib`` blocks): the event loop, and so the gateway's answers, never
wait for a mail server. A message is plain text with an HTML alternative (everything
escaped), its ``Message-ID`` stable across retries (``<key@domain>``), marked
``Auto-Submitted: auto-generated`` so vacation replies stay away (RFC 3834). What the
server says maps to :class:`~hitl_nb.errors.DeliveryFailed`: a 5xx answer to the
message or its recipient is permanent; everything else (no connection, a timeout, a
4xx, a failed login or TLS handshake, which an administrator may fix meanwhile) is
retried.
"""

from __future__ import annotations

import asyncio
import ipaddress
import smtplib
import socket
import ssl
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formatdate

from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify._kind import ChannelKind
from hitl_nb.notify._messages import Message
from hitl_nb.notify._secrets import Secret
from hitl_nb.notify._targets import check_address

__all__ = ["KIND", "EmailChannel", "EmailTarget", "SmtpSettings"]

SECURITY = ("starttls", "tls", "none")


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class EmailTarget:
    """An email address (checked by :func:`~hitl_nb.notify._targets.check_address`)."""

    address: str

    def __post_init__(self) -> None:
        check_address(self.address)


@dataclass(frozen=True)
class SmtpSettings:
    """An SMTP server and how to use it (see the module docstring). ``sender``: the
    ``From`` address; ``domain``: the right side of ``Message-ID`` (default: the
    sender's domain); ``helo``: the name given in EHLO (default: this machine's);
    ``timeout``: seconds for each step of the conversation."""

    host: str
    sender: str
    port: int = 587
    security: str = "starttls"
    user: str | None = None
    password: Secret | None = None
    ca_file: str | None = None
    timeout: float = 30.0
    domain: str | None = None
    helo: str | None = None

    def __post_init__(self) -> None:
        if not self.host or any(ch.isspace() or ch in "/@" for ch in self.host):
            raise NotifyRefused(f"not an SMTP host: {self.host!r}")
        if isinstance(self.port, bool) or not 1 <= int(self.port) <= 65535:
            raise NotifyRefused(f"an SMTP port is 1-65535, got {self.port!r}")
        if self.security not in SECURITY:
            raise NotifyRefused(
                f"SMTP security is one of {', '.join(SECURITY)}, got {self.security!r}"
            )
        if self.security == "none" and not _loopback(self.host):
            raise NotifyRefused(
                "SMTP without TLS is only for a server on this machine (localhost); use "
                "security='starttls' (port 587) or 'tls' (port 465)"
            )
        if (self.user is None) != (self.password is None):
            raise NotifyRefused("an SMTP user needs a password (a Secret), and a password a user")
        if self.user is not None and any(ord(ch) < 0x20 for ch in self.user):
            raise NotifyRefused("an SMTP user name holds no control character")
        check_address(self.sender)
        if not 0.1 <= self.timeout <= 600:
            raise NotifyRefused("an SMTP timeout is 0.1-600 seconds")

    @property
    def message_domain(self) -> str:
        """The right side of every ``Message-ID``."""
        return self.domain or self.sender.rpartition("@")[2]


class EmailChannel:
    """Sends messages by email through one SMTP server (see the module docstring)."""

    def __init__(self, settings: SmtpSettings, *, threads: int = 4) -> None:
        self.settings = settings
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hitl-smtp")
        self._helo: str | None = settings.helo
        # Made once: loading the system's CAs costs milliseconds of CPU per message.
        self._tls: ssl.SSLContext | None = None

    def build(
        self, message: Message, target: EmailTarget, date: float | None = None
    ) -> EmailMessage:
        """The email for ``message`` to ``target`` (no I/O)."""
        mail = EmailMessage(policy=SMTP)
        mail["From"] = self.settings.sender
        mail["To"] = target.address
        mail["Subject"] = message.subject_line()
        mail["Date"] = formatdate(date, usegmt=True)
        mail["Message-ID"] = f"<{message.key}@{self.settings.message_domain}>"
        mail["Auto-Submitted"] = "auto-generated"
        mail.set_content(message.plain(), subtype="plain", charset="utf-8")
        mail.add_alternative(message.html(), subtype="html", charset="utf-8")
        return mail

    async def deliver(self, message: Message, target: EmailTarget) -> None:
        """Send ``message`` to ``target``; :class:`~hitl_nb.errors.DeliveryFailed`
        when the server did not take it."""
        mail = self.build(message, target)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._pool, self._send, mail, target.address)

    def _name(self) -> str:
        if self._helo is None:
            self._helo = socket.getfqdn()
        return self._helo

    def _context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context(cafile=self.settings.ca_file)
        return self._tls

    def _send(self, mail: EmailMessage, to: str) -> None:
        s = self.settings
        where = f"the SMTP server {s.host}:{s.port}"
        try:
            password = s.password.read() if s.password is not None else None
        except NotifyRefused as exc:
            raise DeliveryFailed(f"{where}: no password ({exc})") from None
        try:
            context = self._context() if s.security != "none" else None
            if s.security == "tls":
                smtp: smtplib.SMTP = smtplib.SMTP_SSL(
                    s.host, s.port, local_hostname=self._name(), timeout=s.timeout, context=context
                )
            else:
                smtp = smtplib.SMTP(s.host, s.port, local_hostname=self._name(), timeout=s.timeout)
            with smtp:
                smtp.ehlo()
                if s.security == "starttls":
                    smtp.starttls(context=context)
                    smtp.ehlo()
                if s.user is not None and password is not None:
                    smtp.login(s.user, password)
                smtp.send_message(mail, s.sender, [to])
        except smtplib.SMTPRecipientsRefused as exc:
            code, said = next(iter(exc.recipients.values()), (0, b""))
            raise _refused(where, "refused the recipient", code, said) from None
        except smtplib.SMTPAuthenticationError as exc:
            raise DeliveryFailed(
                f"{where} refused the login of {s.user!r} ({exc.smtp_code})"
            ) from None
        except (smtplib.SMTPConnectError, smtplib.SMTPHeloError, smtplib.SMTPSenderRefused) as exc:
            # The server, or our settings (the sender's address), not this message: an
            # administrator may fix it while the message waits.
            raise _refused(where, "refused us", exc.smtp_code, exc.smtp_error, retry=True) from None
        except smtplib.SMTPResponseException as exc:
            raise _refused(where, "refused the message", exc.smtp_code, exc.smtp_error) from None
        except smtplib.SMTPNotSupportedError:
            raise DeliveryFailed(f"{where} does not offer STARTTLS (or the login asked)") from None
        except ssl.SSLError as exc:
            raise DeliveryFailed(f"TLS with {where} failed: {exc.reason or exc}") from None
        except (OSError, smtplib.SMTPException) as exc:
            raise DeliveryFailed(
                f"{where} could not be reached ({type(exc).__name__}: {exc})"
            ) from None

    async def aclose(self) -> None:
        """Let the threads go (a send under way finishes first)."""
        await asyncio.get_running_loop().run_in_executor(None, self._pool.shutdown)


def _refused(
    where: str, what: str, code: int, said: bytes | str, *, retry: bool = False
) -> DeliveryFailed:
    text = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
    text = " ".join(text.split())[:200]
    permanent = not retry and 500 <= code < 600
    return DeliveryFailed(f"{where} {what}: {code} {text}", permanent=permanent)


#: Email: a person's address comes from the :class:`~hitl_nb.notify.AddressBook`, never
#: from a URL or a team channel's setting.
KIND = ChannelKind(
    "email",
    EmailTarget,
    "email",
    transport="email",
    unavailable="no SMTP server is set up to send email",
)
