"""A Slack app's modal: a flat form answered in Slack (``views.open``, ``view_submission``).

A prompt whose ``response_schema`` is a *flat form* Slack's inputs can hold (the
subset MCP elicitation uses: an object whose members are each a string, a date string
(``format: date``), a number, an integer, a boolean, or one pick among plain values
(``enum``, or ``oneOf`` / ``anyOf`` of ``const``); at most :data:`MAX_FIELDS`) gets an
"Answer" button (:func:`modal_action_id`); its click opens a modal (:func:`modal_view`)
whose inputs are made from the schema by a registry keyed by the member's kind
(:data:`_INPUTS`):

========  =========================================================
string    ``plain_text_input`` (``min_length`` / ``max_length``)
date      ``datepicker``
number    ``number_input``, decimals allowed
integer   ``number_input``, no decimals
boolean   ``radio_buttons`` Yes / No
one pick  ``static_select``, each option named by its index
========  =========================================================

Each input is an ``input`` block whose ``block_id`` is ``f{index}`` (the member's place
in the schema), its label the member's ``title`` or its name in words, optional unless
``required`` names it, its hint the ``description``; the agent's words are cut and
neutralised as a message's (spec S-1). ``private_metadata`` carries the prompt's ids and
the message's ``response_url``.

:func:`read_modal` turns a submission's ``view.state.values`` back into the payload,
exactly: integers as ints, numbers as ints when whole else floats, a pick as the
schema's own value (read again from the stored schema by its index), an optional field
left empty absent. A block that is not one of the form's, an input of the wrong type, a
number that is not one, an index the pick does not have: each a field error (or, for a
block the form does not have, the whole submission refused), never a payload.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hitl_nb._choices import options
from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import _text

__all__ = [
    "MAX_FIELDS",
    "MODAL_CALLBACK",
    "MODAL_PREFIX",
    "ModalField",
    "modal_action_id",
    "modal_action_value",
    "modal_fields",
    "modal_view",
    "read_modal",
    "read_modal_action",
    "read_modal_metadata",
]

#: The most members a form may have to be answered in a modal (Slack allows 100 blocks).
MAX_FIELDS = 20
#: The "Answer" button's ``action_id`` starts so; the modal's ``callback_id``.
MODAL_PREFIX = "hitl-modal:"
MODAL_CALLBACK = "hitl-answer"
#: Slack's limits: a label, a hint, a modal's title, an option's text, private_metadata.
LABEL_LIMIT = 2000
HINT_LIMIT = 2000
OPTION_LIMIT = 75
METADATA_LIMIT = 3000
TEXT_LIMIT = 3000
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: A field left empty (None is a value an ``enum`` may offer).
_EMPTY: Any = object()


@dataclass(frozen=True)
class ModalField:
    """One member of a flat form: its ``name``, ``kind`` (a key of :data:`_INPUTS`),
    whether it is ``required``, its ``label`` and ``hint`` (the agent's words, raw), and
    for a pick its ``choices`` (words, value)."""

    name: str
    kind: str
    required: bool
    label: str
    hint: str
    choices: tuple[tuple[str, Any], ...] = ()
    min_length: int | None = None
    max_length: int | None = None


def _kind(member: Mapping[str, Any]) -> str | None:
    if options(member) is not None and member.get("type") != "boolean":
        return "pick"
    kind = member.get("type")
    if kind == "string":
        fmt = member.get("format")
        if fmt is None:
            return "string"
        return "date" if fmt == "date" else None
    if kind in ("number", "integer", "boolean"):
        return str(kind)
    return None


def _words(name: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ")
    spaced = " ".join(spaced.split())
    return spaced[:1].upper() + spaced[1:] if spaced else name


def _length(member: Mapping[str, Any], key: str) -> int | None:
    value = member.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= TEXT_LIMIT:
        return None
    return value


def modal_fields(schema: Any) -> tuple[ModalField, ...]:
    """The fields of a flat form a modal holds, in the schema's order; ``()`` when the
    schema is not one (see the module docstring)."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return ()
    properties = schema.get("properties")
    required = schema.get("required", [])
    if not isinstance(properties, Mapping) or not properties or len(properties) > MAX_FIELDS:
        return ()
    if not isinstance(required, list) or not all(r in properties for r in required):
        return ()
    out = []
    for name, member in properties.items():
        if not isinstance(name, str) or not isinstance(member, Mapping):
            return ()
        kind = _kind(member)
        if kind is None:
            return ()
        title, description = member.get("title"), member.get("description")
        label = title if isinstance(title, str) and title.strip() else _words(name)
        picks = options(member) if kind == "pick" else None
        out.append(
            ModalField(
                name,
                kind,
                name in required,
                label,
                description if isinstance(description, str) else "",
                tuple(picks or ()),
                _length(member, "minLength") if kind == "string" else None,
                _length(member, "maxLength") if kind == "string" else None,
            )
        )
    return tuple(out)


def _digest(reg_id: str, prompt_id: str) -> str:
    text = json.dumps([reg_id, prompt_id], ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(text).hexdigest()[:16]


def modal_action_id(reg_id: str, prompt_id: str) -> str:
    """The "Answer" button's ``action_id``: a digest of the prompt."""
    return f"{MODAL_PREFIX}{_digest(reg_id, prompt_id)}"


def modal_action_value(reg_id: str, prompt_id: str) -> str:
    """The "Answer" button's ``value``: the prompt's ids."""
    return json.dumps(["v1", reg_id, prompt_id], ensure_ascii=False, separators=(",", ":"))


def read_modal_action(action: Mapping[str, Any]) -> tuple[str, str]:
    """(registration id, prompt id) of a clicked "Answer" button;
    :class:`~hitl_nb.errors.NotifyRefused` when it is not whole."""
    ident, value = action.get("action_id"), action.get("value")
    try:
        tag, reg_id, prompt_id = json.loads(value) if isinstance(value, str) else [None] * 3
    except (ValueError, TypeError):
        raise NotifyRefused("the action's value is not one of ours") from None
    if (
        tag != "v1"
        or not isinstance(reg_id, str)
        or not isinstance(prompt_id, str)
        or ident != modal_action_id(reg_id, prompt_id)
    ):
        raise NotifyRefused("the action's value is not one of ours")
    return reg_id, prompt_id


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": _text.defang(_text.one_line(text, limit)) or "?"}


def _option(index: int, words: str) -> dict[str, Any]:
    return {"text": _plain(words, OPTION_LIMIT), "value": str(index)}


def _string(field: ModalField) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "plain_text_input", "action_id": "value"}
    if field.min_length is not None:
        element["min_length"] = field.min_length
    if field.max_length is not None and field.max_length >= 1:
        element["max_length"] = field.max_length
    if (field.max_length or TEXT_LIMIT) > 150:
        element["multiline"] = True
    return element


def _number(field: ModalField) -> dict[str, Any]:
    return {"type": "number_input", "action_id": "value", "is_decimal_allowed": True}


def _integer(field: ModalField) -> dict[str, Any]:
    return {"type": "number_input", "action_id": "value", "is_decimal_allowed": False}


def _date(field: ModalField) -> dict[str, Any]:
    return {"type": "datepicker", "action_id": "value"}


def _boolean(field: ModalField) -> dict[str, Any]:
    picks = [_option(0, "Yes"), _option(1, "No")]
    return {"type": "radio_buttons", "action_id": "value", "options": picks}


def _pick(field: ModalField) -> dict[str, Any]:
    picks = [_option(i, words) for i, (words, _) in enumerate(field.choices)]
    return {"type": "static_select", "action_id": "value", "options": picks}


#: A field's kind -> its input element (the form's registry).
_INPUTS: dict[str, Callable[[ModalField], dict[str, Any]]] = {
    "string": _string,
    "date": _date,
    "number": _number,
    "integer": _integer,
    "boolean": _boolean,
    "pick": _pick,
}


def modal_view(
    reg_id: str,
    prompt_id: str,
    question: str,
    fields: tuple[ModalField, ...],
    response_url: str | None,
) -> dict[str, Any]:
    """The modal answering one prompt (``views.open``'s ``view``; no I/O)."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": _text.chat(question, TEXT_LIMIT)}}
    ]
    for index, field in enumerate(fields):
        block: dict[str, Any] = {
            "type": "input",
            "block_id": f"f{index}",
            "label": _plain(field.label, LABEL_LIMIT),
            "element": _INPUTS[field.kind](field),
            "optional": not field.required,
        }
        if field.hint.strip():
            block["hint"] = _plain(field.hint, HINT_LIMIT)
        blocks.append(block)
    metadata = json.dumps(["v1", reg_id, prompt_id, response_url], separators=(",", ":"))
    return {
        "type": "modal",
        "callback_id": MODAL_CALLBACK,
        "title": {"type": "plain_text", "text": "Answer"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": metadata if len(metadata) <= METADATA_LIMIT else metadata[:0],
        "blocks": blocks,
    }


def read_modal_metadata(view: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """(registration id, prompt id, response_url) a submitted modal carries;
    :class:`~hitl_nb.errors.NotifyRefused` when it is not one of ours."""
    if view.get("callback_id") != MODAL_CALLBACK:
        raise NotifyRefused("the view is not one of ours")
    text = view.get("private_metadata")
    try:
        tag, reg_id, prompt_id, url = json.loads(text) if isinstance(text, str) else [None] * 4
    except (ValueError, TypeError):
        raise NotifyRefused("the view's metadata is not one of ours") from None
    if tag != "v1" or not isinstance(reg_id, str) or not isinstance(prompt_id, str):
        raise NotifyRefused("the view's metadata is not one of ours")
    return reg_id, prompt_id, url if isinstance(url, str) else None


def _index(given: Any, count: int) -> int | None:
    value = given.get("value") if isinstance(given, Mapping) else None
    if not isinstance(value, str) or not value.isdigit() or int(value) >= count:
        return None
    return int(value)


def _read(field: ModalField, element: Mapping[str, Any]) -> tuple[Any, str | None]:
    """(the value, None) or (None, what was wrong); (:data:`_EMPTY`, None): left empty."""
    kind = element.get("type")
    if field.kind == "string":
        if kind != "plain_text_input":
            return None, "expected a text input"
        value = element.get("value")
        if value is None or value == "":
            return _EMPTY, None
        return (value, None) if isinstance(value, str) else (None, "expected text")
    if field.kind in ("number", "integer"):
        if kind != "number_input":
            return None, "expected a number input"
        value = element.get("value")
        if value is None or value == "":
            return _EMPTY, None
        try:
            number = float(value) if isinstance(value, str) else math.nan
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            return None, "Enter a number."
        if number.is_integer():
            return int(number), None
        if field.kind == "integer":
            return None, "Enter a whole number."
        return number, None
    if field.kind == "date":
        if kind != "datepicker":
            return None, "expected a date picker"
        value = element.get("selected_date")
        if value is None:
            return _EMPTY, None
        try:
            ok = isinstance(value, str) and _DATE.fullmatch(value) is not None
            ok = ok and bool(datetime.date.fromisoformat(value))
        except ValueError:
            ok = False
        return (value, None) if ok else (None, "Pick a date.")
    expected = "radio_buttons" if field.kind == "boolean" else "static_select"
    if kind != expected:
        return None, f"expected a {expected.replace('_', ' ')} input"
    selected = element.get("selected_option")
    if selected is None:
        return _EMPTY, None
    if field.kind == "boolean":
        index = _index(selected, 2)
        return (None, "Pick Yes or No.") if index is None else (index == 0, None)
    index = _index(selected, len(field.choices))
    return (None, "Pick one of the options.") if index is None else (field.choices[index][1], None)


def read_modal(
    fields: tuple[ModalField, ...], values: Any
) -> tuple[dict[str, Any], dict[str, str]]:
    """(the payload, {}) of a submission's ``view.state.values``, or (partial, errors:
    ``block_id`` -> what to fix); :class:`~hitl_nb.errors.NotifyRefused` when the
    submission names a block the form does not have, or is not Slack's shape."""
    if not isinstance(values, Mapping):
        raise NotifyRefused("the submission has no state values")
    known = {f"f{i}" for i in range(len(fields))}
    extra = sorted(str(b) for b in values if b not in known)
    if extra:
        raise NotifyRefused(
            f"the submission has fields the form does not: {', '.join(extra)}"[:300]
        )
    payload: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for index, field in enumerate(fields):
        block_id = f"f{index}"
        given = values.get(block_id, {})
        if not isinstance(given, Mapping) or set(given) - {"value"}:
            raise NotifyRefused(f"the submission's {block_id} is not one input")
        element = given.get("value", {})
        if not isinstance(element, Mapping):
            raise NotifyRefused(f"the submission's {block_id} is not one input")
        value, wrong = _read(field, element) if element else (_EMPTY, None)
        if wrong is not None:
            errors[block_id] = wrong
        elif value is not _EMPTY:
            payload[field.name] = value
        elif field.required:
            errors[block_id] = "This is required."
    return payload, errors
