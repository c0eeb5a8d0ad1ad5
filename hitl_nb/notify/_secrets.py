"""A password or signing key, read where it is needed and shown nowhere.

A secret is named by where it lives, an environment variable or a file, never by its
value: settings, a command line, the hub's service list and a log only ever show the
place (``Secret(env='HITL_SMTP_PASSWORD')``). It is read again at each use, so a
rotated file takes effect without a restart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hitl_nb.errors import NotifyRefused

__all__ = ["Secret"]

#: A secret longer than this is a wrong file, not a key.
MAX_SECRET_BYTES = 64 * 1024


@dataclass(frozen=True)
class Secret:
    """A secret in the environment variable ``env`` or the file ``file`` (one of them).

    A file's trailing newline is not part of it. ``repr`` and ``str`` name the place.
    """

    env: str | None = None
    file: str | None = None

    def __post_init__(self) -> None:
        if (self.env is None) == (self.file is None):
            raise NotifyRefused("a secret comes from one place: env='NAME' or file='/path'")
        if self.env is not None and (not self.env or "=" in self.env or "\0" in self.env):
            raise NotifyRefused(f"not an environment variable name: {self.env!r}")

    @property
    def where(self) -> str:
        """The place, for messages."""
        if self.env is not None:
            return f"the environment variable {self.env}"
        return f"the file {self.file}"

    def read(self) -> str:
        """The secret now; :class:`~hitl_nb.errors.NotifyRefused` (naming the place,
        never a value) when it is missing or empty."""
        if self.env is not None:
            value = os.environ.get(self.env)
        else:
            path = Path(str(self.file))
            try:
                if path.stat().st_size > MAX_SECRET_BYTES:
                    raise NotifyRefused(f"{self.where} is too large to be a secret")
                value = path.read_text(encoding="utf-8").rstrip("\r\n")
            except (OSError, UnicodeDecodeError) as exc:
                raise NotifyRefused(f"{self.where} cannot be read ({type(exc).__name__})") from None
        if not value:
            raise NotifyRefused(f"{self.where} is not set or empty")
        return value

    def __repr__(self) -> str:
        if self.env is not None:
            return f"Secret(env={self.env!r})"
        return f"Secret(file={self.file!r})"

    __str__ = __repr__
