"""How a generic JSON webhook's request is signed, so its receiver can believe it.

Each request carries::

    X-Hitl-Timestamp: 1767225600            (Unix seconds when it was sent)
    X-Hitl-Signature: v1=<64 hex digits>
    Idempotency-Key: <64 hex digits>        (the same on every retry of one message)

where the signature is HMAC-SHA256, keyed with the webhook's secret (its UTF-8 bytes),
over the timestamp's digits, a dot, and the request body's bytes exactly as received.
A receiver recomputes it and compares in constant time, refuses a timestamp more than
five minutes from its own clock (a replay of an old request), and remembers the
idempotency keys it has seen for that long (a replay within them, or our own retry of a
message it already has). docs/notify.md shows the receiver's side in full.

The timestamp is inside what is signed, so it cannot be changed without the secret; the
version prefix (``v1=``) leaves room for another scheme later.
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = [
    "IDEMPOTENCY_HEADER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "sign",
    "signed_headers",
]

SIGNATURE_HEADER = "X-Hitl-Signature"
TIMESTAMP_HEADER = "X-Hitl-Timestamp"
IDEMPOTENCY_HEADER = "Idempotency-Key"
#: How far a receiver should let a timestamp be from its own clock, in seconds.
TOLERANCE = 300


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value for ``body`` sent at ``timestamp``."""
    signed = str(int(timestamp)).encode("ascii") + b"." + body
    digest = hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()
    return f"v1={digest}"


def signed_headers(secret: str, timestamp: int, body: bytes, key: str) -> dict[str, str]:
    """The three headers of a signed request (see the module docstring)."""
    return {
        TIMESTAMP_HEADER: str(int(timestamp)),
        SIGNATURE_HEADER: sign(secret, timestamp, body),
        IDEMPOTENCY_HEADER: key,
    }
