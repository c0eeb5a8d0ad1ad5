"""Request handling both bindings of the mock agent share (no tornado in here).

Counters read from the wire (:func:`parse_count`), a send request's message and
configuration (:func:`decode_send_params`), ListTasks (:func:`list_tasks`), and the
push-notification configuration requests (:func:`read_push_config`,
:func:`page_of_push_configs`).
"""

from __future__ import annotations

import re
from typing import Any

from hitl_nb.a2a import (
    CODEC_V1,
    Codec,
    Message,
    PushConfig,
    TaskState,
    decode_push_config,
    encode_push_config,
)
from hitl_nb.errors import InvalidParams, WireDecodeError
from hitl_nb.mock_agent._views import task_view
from hitl_nb.spec import parse_rfc3339

__all__ = [
    "decode_send_params",
    "list_tasks",
    "page_of_push_configs",
    "parse_count",
    "read_push_config",
]

# Counters on the wire (event ids, page tokens, query integers) are ASCII digits, at most
# 18 of them: str.isdigit() also accepts "²" and "١", which int() refuses or reads,
# and int() refuses more than 4300 digits.
_COUNT = re.compile(r"[0-9]{1,18}")


def parse_count(raw: str, what: str) -> int:
    """A non-negative integer written in ASCII digits (InvalidParams naming ``what``)."""
    text = raw.strip()
    if _COUNT.fullmatch(text) is None:
        shown = text if len(text) <= 40 else text[:40] + f"... ({len(text)} characters)"
        raise InvalidParams(f"{what} must be a non-negative integer, got {shown!r}")
    return int(text)


def decode_send_params(body: Any, pointer: str, codec: Codec) -> tuple[Message, dict[str, Any]]:
    """The message and configuration of a send request (InvalidParams naming the member)."""
    if not isinstance(body, dict):
        raise InvalidParams(f"{pointer or '/'}: expected an object")
    if "message" not in body:
        raise InvalidParams(f"{pointer}/message: required member is missing")
    try:
        message = codec.decode_message(body["message"], f"{pointer}/message")
    except WireDecodeError as exc:
        raise InvalidParams(str(exc)) from None
    config = body.get("configuration") or {}
    if not isinstance(config, dict):
        raise InvalidParams(f"{pointer}/configuration: expected an object")
    for key in ("returnImmediately", "blocking"):
        if key in config and not isinstance(config[key], bool):
            raise InvalidParams(f"{pointer}/configuration/{key}: expected a boolean")
    hl = config.get("historyLength")
    if hl is not None and (isinstance(hl, bool) or not isinstance(hl, int) or hl < 0):
        raise InvalidParams(f"{pointer}/configuration/historyLength: expected an integer >= 0")
    return message, config


def read_push_config(body: Any, codec: Codec, pointer: str) -> PushConfig:
    """A TaskPushNotificationConfig from a request (InvalidParams naming the member)."""
    try:
        return decode_push_config(body, codec.version, pointer)
    except WireDecodeError as exc:
        raise InvalidParams(str(exc)) from None


def page_of_push_configs(
    configs: list[PushConfig], page_size: int | None, page_token: str | None
) -> dict[str, Any]:
    """A 1.0 ListTaskPushNotificationConfigsResponse: one page, and the next page's token."""
    start = parse_count(page_token, "pageToken (a token this agent issued)") if page_token else 0
    size = page_size or 50
    more = start + size < len(configs)
    return {
        "configs": [encode_push_config(c, "1.0") for c in configs[start : start + size]],
        "nextPageToken": str(start + size) if more else "",
    }


def list_tasks(
    handler: Any,
    *,
    context_id: str | None,
    state: str | None,
    page_size: int | None,
    page_token: str | None,
    history_length: int | None,
    include_artifacts: bool,
    updated_after: str | None = None,
) -> dict[str, Any]:
    """A ListTasks result (1.0 JSON) shared by both bindings."""
    after = None
    if updated_after:
        after = parse_rfc3339(updated_after)
        if after is None:
            raise InvalidParams("statusTimestampAfter must be an RFC 3339 timestamp")
    wanted: TaskState | None = None
    if state:
        try:
            wanted = CODEC_V1.state_from_wire(state, "/status")
        except WireDecodeError as exc:
            raise InvalidParams(str(exc)) from None
    start = parse_count(page_token, "pageToken (a token this agent issued)") if page_token else 0
    recs = handler.core.list_tasks(context_id=context_id, state=wanted, updated_after=after)
    size = page_size or 50
    page = recs[start : start + size]
    tasks = [
        CODEC_V1.encode_task(
            task_view(
                r.task,
                activated=handler.activated(),
                faults=handler.service.faults,
                history_length=history_length,
                include_artifacts=include_artifacts,
            )
        )
        for r in page
    ]
    more = start + size < len(recs)
    return {
        "tasks": tasks,
        "nextPageToken": str(start + size) if more else "",
        "pageSize": size,
        "totalSize": len(recs),
    }
