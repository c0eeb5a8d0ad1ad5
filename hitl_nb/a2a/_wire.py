"""Checked reads of untrusted JSON, shared by the two codecs.

Every reader takes the JSON Pointer of the value it reads, so a failure names the
member: ``/message/parts/0/text: expected a string, got int``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any, TypeVar

from hitl_nb._pointer import join
from hitl_nb.errors import WireDecodeError

T = TypeVar("T")

_JSON_TYPES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    type(None): "null",
}


def type_name(value: Any) -> str:
    """The JSON name of a Python value's type."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def child(pointer: str, key: str | int) -> str:
    """The pointer of ``key`` under ``pointer`` (escaped by :mod:`hitl_nb._pointer`)."""
    return join(pointer, key)


def obj(value: Any, pointer: str) -> dict[str, Any]:
    """``value`` as a JSON object, or raise naming ``pointer``."""
    if not isinstance(value, dict):
        raise WireDecodeError(pointer, f"expected an object, got {type_name(value)}")
    return value


def req(o: dict[str, Any], key: str, pointer: str) -> Any:
    """The required member ``key`` of ``o``."""
    if key not in o or o[key] is None:
        raise WireDecodeError(child(pointer, key), "required member is missing")
    return o[key]


def string(value: Any, pointer: str) -> str:
    """``value`` as a string."""
    if not isinstance(value, str):
        raise WireDecodeError(pointer, f"expected a string, got {type_name(value)}")
    return value


def req_str(o: dict[str, Any], key: str, pointer: str) -> str:
    """The required string member ``key``."""
    value = req(o, key, pointer)
    # The member's pointer is made only to name it in an error.
    return value if isinstance(value, str) else string(value, child(pointer, key))


def exactly_one(o: dict[str, Any], keys: tuple[str, ...], pointer: str, what: str) -> str:
    """The one member of ``keys`` that ``o`` holds, or raise naming those it holds.

    ``what`` starts the message: ``"a part holds exactly one of text, data; got none"``.
    """
    present = [k for k in keys if k in o]
    if len(present) != 1:
        raise WireDecodeError(
            pointer,
            f"{what} holds exactly one of {', '.join(keys)}; got " + (", ".join(present) or "none"),
        )
    return present[0]


def opt_str(o: dict[str, Any], key: str, pointer: str) -> str | None:
    """The optional string member ``key`` (absent or null gives None)."""
    value = o.get(key)
    if value is None or isinstance(value, str):
        return value
    return string(value, child(pointer, key))


def opt_bool(o: dict[str, Any], key: str, pointer: str, default: bool = False) -> bool:
    """The optional boolean member ``key``."""
    value = o.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise WireDecodeError(child(pointer, key), f"expected a boolean, got {type_name(value)}")
    return value


def opt_obj(o: dict[str, Any], key: str, pointer: str) -> dict[str, Any] | None:
    """The optional object member ``key``."""
    value = o.get(key)
    if value is None or isinstance(value, dict):
        return value
    return obj(value, child(pointer, key))


def array(value: Any, pointer: str) -> list[Any]:
    """``value`` as a JSON array."""
    if not isinstance(value, list):
        raise WireDecodeError(pointer, f"expected an array, got {type_name(value)}")
    return value


def opt_list(o: dict[str, Any], key: str, pointer: str, item: Callable[[Any, str], T]) -> list[T]:
    """The optional array member ``key``, each item decoded by ``item(value, pointer)``."""
    value = o.get(key)
    if value is None:
        return []
    here = child(pointer, key)
    return [item(v, child(here, i)) for i, v in enumerate(array(value, here))]


def req_list(o: dict[str, Any], key: str, pointer: str, item: Callable[[Any, str], T]) -> list[T]:
    """The required array member ``key`` (may be empty)."""
    req(o, key, pointer)
    return opt_list(o, key, pointer, item)


def b64decode(value: Any, pointer: str) -> bytes:
    """Base64 text (standard or URL-safe alphabet, padding optional) as bytes."""
    text = string(value, pointer)
    padded = text + "=" * (-len(text) % 4)
    try:
        normal = padded.replace("-", "+").replace("_", "/")
        return base64.b64decode(normal.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise WireDecodeError(pointer, "expected base64 data") from exc


def b64encode(data: bytes) -> str:
    """Bytes as standard base64 text."""
    return base64.b64encode(data).decode("ascii")


def enum_member(value: Any, pointer: str, table: dict[str, T], what: str) -> T:
    """Look ``value`` up in ``table`` or raise listing what was expected."""
    text = string(value, pointer)
    try:
        return table[text]
    except KeyError:
        raise WireDecodeError(pointer, f"unknown {what} {text!r}") from None


def put(out: dict[str, Any], key: str, value: Any) -> None:
    """Set ``out[key]`` unless ``value`` is None or an empty list."""
    if value is None or (isinstance(value, list) and not value):
        return
    out[key] = value
