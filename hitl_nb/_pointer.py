"""JSON Pointer (RFC 6901) tokens: the one place ``~`` and ``/`` are escaped.

A pointer is ``""`` (the whole document) or ``/`` followed by reference tokens joined
with ``/``; inside a token ``~`` is written ``~0`` and ``/`` is written ``~1``
(RFC 6901 §3). Unescaping turns ``~1`` into ``/`` first and ``~0`` into ``~`` second
(§4), so ``~01`` stays the two characters ``~1``.

>>> join("", "a/b", 0)
'/a~1b/0'
>>> split("/a~1b/x~0y")
['a/b', 'x~y']
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["escape", "join", "pointer", "split", "unescape"]


def escape(token: str | int) -> str:
    """One reference token as it is written in a pointer: ``a/b~c`` -> ``a~1b~0c``."""
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    """One written reference token back to its key: ``a~1b~0c`` -> ``a/b~c``."""
    return token.replace("~1", "/").replace("~0", "~")


def join(base: str, *keys: str | int) -> str:
    """``base`` extended by ``keys`` (object members or array indexes), each escaped."""
    return base + "".join("/" + escape(k) for k in keys)


def pointer(keys: Iterable[str | int]) -> str:
    """The pointer naming a path of keys from the root (no keys: ``""``, the root)."""
    return join("", *keys)


def split(text: str) -> list[str]:
    """The keys a pointer names, unescaped (``""`` -> ``[]``).

    Raises ``ValueError`` for text that is not a pointer (non-empty without a leading
    ``/``).
    """
    if text == "":
        return []
    if not text.startswith("/"):
        raise ValueError(f"a JSON Pointer is empty or starts with '/', got {text!r}")
    return [unescape(t) for t in text[1:].split("/")]
