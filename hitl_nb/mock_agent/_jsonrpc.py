"""The JSON-RPC binding of the mock agent: A2A 1.0 and, for old clients, A2A 0.3.

The version comes from the ``A2A-Version`` header (or query parameter). A missing
version means 0.3, as A2A 1.0 §3.6 requires; ``0.3`` and ``1.0`` are served, anything
else gets VersionNotSupported (-32009). Both versions share the core; only the codec
(``codec_for(version)``) and the error ``data`` shape differ: 1.0 sends a list of detail
objects (an ErrorInfo first), 0.3 the object of the example that §Acceptance and
rejection points to. Errors travel with HTTP 200, as JSON-RPC does, except the
extension's two errors on 0.3, which carry HTTP 409 / 422 as that example shows.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from hitl_nb.a2a import (
    A2AVersion,
    Message,
    StreamEvent,
    codec_for,
    encode_push_config,
    spoken_version,
)
from hitl_nb.errors import (
    A2AError,
    ExtendedAgentCardNotConfigured,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    PromptConflict,
    ResponseInvalid,
    VersionNotSupported,
    reason_phrase,
)
from hitl_nb.mock_agent._http import BaseHandler
from hitl_nb.mock_agent._requests import (
    decode_send_params,
    list_tasks,
    page_of_push_configs,
    read_push_config,
)
from hitl_nb.mock_agent._views import task_view
from hitl_nb.mock_agent._wire_errors import error_data_v03, error_details

__all__ = ["JsonRpcHandler"]

log = logging.getLogger("hitl_nb.mock_agent")

Method = Callable[["JsonRpcHandler", dict[str, Any]], Awaitable[Any]]


def _normalize(version: str | None) -> A2AVersion | None:
    """The version a request asks for; none named means 0.3 (A2A 1.0 §3.6)."""
    return "0.3" if version is None else spoken_version(version)


def _named(params: dict[str, Any], key: str) -> str:
    """``key``, or its snake_case spelling when only that is sent.

    Protobuf JSON parsers accept a field's snake_case name as well (the TCK's JSON-RPC
    client sends ``history_length``, ``task_id``); both at once is ambiguous.
    """
    snake = _snake(key)
    if snake == key:
        return key
    if key in params and snake in params:
        raise InvalidParams(f"/params: send {key} or {snake}, not both")
    return snake if snake in params else key


def _str_param(params: dict[str, Any], key: str) -> str:
    key = _named(params, key)
    value = params.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidParams(f"/params/{key}: expected a non-empty string")
    return value


def _opt_str_param(params: dict[str, Any], key: str) -> str | None:
    if params.get(_named(params, key)) is None:
        return None
    return _str_param(params, key)


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def _int_param(params: dict[str, Any], key: str, low: int, high: int) -> int | None:
    key = _named(params, key)
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidParams(f"/params/{key}: expected an integer in [{low}, {high}]")
    return value


class JsonRpcHandler(BaseHandler):
    """``POST /``: one JSON-RPC request per call (batches are refused)."""

    version: A2AVersion = "0.3"
    request_id: str | int | None = None

    async def post(self) -> None:
        """Answer one JSON-RPC request (errors as JSON-RPC error objects)."""
        raw_version = self.requested_version()
        self.version = _normalize(raw_version) or "1.0"
        self.echo_extensions(self.version)
        try:
            await self._dispatch(raw_version)
        except A2AError as exc:
            self.reply_error(exc)
        except Exception as exc:  # a bug must still answer in JSON-RPC
            log.exception("JSON-RPC request failed")
            self.reply_error(InternalError(f"internal error: {type(exc).__name__}: {exc}"))

    async def _dispatch(self, raw_version: str | None) -> None:
        body = self.read_body()
        if isinstance(body, list):
            raise InvalidRequest("JSON-RPC batch requests are not supported: send one object")
        if not isinstance(body, dict):
            raise InvalidRequest("a JSON-RPC request must be a JSON object")
        rid = body.get("id")
        if isinstance(rid, (str, int)) and not isinstance(rid, bool):
            self.request_id = rid
        if body.get("jsonrpc") != "2.0":
            raise InvalidRequest('/jsonrpc: must be "2.0"')
        if "id" not in body:
            raise InvalidRequest("/id: required (notifications are not supported)")
        if self.request_id is None:
            raise InvalidRequest("/id: must be a string or an integer")
        method = body.get("method")
        if not isinstance(method, str):
            raise InvalidRequest("/method: must be a string")
        if _normalize(raw_version) is None:
            raise VersionNotSupported(
                f"A2A-Version {raw_version!r} is not supported; this agent speaks 1.0 and 0.3"
            )
        params = body.get("params", {})
        if not isinstance(params, dict):
            raise InvalidParams("/params: expected an object")
        table = METHODS_V1 if self.version == "1.0" else METHODS_V03
        handler = table.get(method)
        if handler is None:
            other = METHODS_V03 if self.version == "1.0" else METHODS_V1
            hint = ""
            if method in other:
                hint = f" (it is an A2A {'0.3' if self.version == '1.0' else '1.0'} method: "
                hint += f"send {'no A2A-Version' if self.version == '1.0' else 'A2A-Version: 1.0'})"
            raise MethodNotFound(f"method {method!r} not found in A2A {self.version}{hint}")
        result = await handler(self, params)
        if result is not _STREAMED:
            self.reply({"jsonrpc": "2.0", "id": self.request_id, "result": result})

    # -- replies ----------------------------------------------------------------------

    def reply(self, obj: dict[str, Any]) -> None:
        """Answer with a JSON-RPC response object (HTTP 200)."""
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(obj, separators=(",", ":")))

    def reply_error(self, exc: A2AError) -> None:
        """Answer with ``exc`` as a JSON-RPC error in this version's shape."""
        if self._streaming:
            self.finish()
            return
        err: dict[str, Any] = {"code": exc.code, "message": exc.message}
        data = error_details(exc) if self.version == "1.0" else error_data_v03(exc)
        if data is not None:
            err["data"] = data
        if self.version == "0.3" and isinstance(exc, (PromptConflict, ResponseInvalid)):
            # The example §Acceptance and rejection points to (written for A2A 0.3) pairs
            # the JSON-RPC error with HTTP 422 (409 for -32010). 1.0 keeps HTTP 200: the
            # official SDK's JSON-RPC client raises on any other status before reading
            # the error object.
            self.set_status(exc.http_status, reason_phrase(exc.http_status))
        self.reply({"jsonrpc": "2.0", "id": self.request_id, "error": err})

    def wrap(self, event: StreamEvent) -> dict[str, Any]:
        """One SSE ``data:`` object: the JSON-RPC response carrying a stream event."""
        result = codec_for(self.version).encode_stream_response(event)
        return {"jsonrpc": "2.0", "id": self.request_id, "result": result}

    def task_json(self, rec: Any, history_length: int | None = None) -> dict[str, Any]:
        """The task as this client may see it, in this version's JSON."""
        task = task_view(
            rec.task,
            activated=self.activated(),
            faults=self.service.faults,
            history_length=history_length,
        )
        out: dict[str, Any] = codec_for(self.version).encode_task(task)
        return out

    # -- methods ----------------------------------------------------------------------

    async def send(self, params: dict[str, Any]) -> Any:
        """SendMessage / message/send: blocks until settled unless asked not to."""
        codec = codec_for(self.version)
        message, config = decode_send_params(params, "/params", codec)
        rec, _ = self.core.send(message, self.incoming_push(config, codec, "/params"))
        if isinstance(rec, Message):  # a direct reply, no task
            return codec.encode_send_result(rec)
        blocking = (
            not config.get("returnImmediately", False)
            if self.version == "1.0"
            else config.get("blocking", True)
        )
        if blocking:
            await self.core.settled(rec)
        task = task_view(
            rec.task,
            activated=self.activated(),
            faults=self.service.faults,
            history_length=config.get("historyLength"),
        )
        return codec.encode_send_result(task)

    async def stream(self, params: dict[str, Any]) -> Any:
        """SendStreamingMessage / message/stream: the events this message causes."""
        codec = codec_for(self.version)
        message, config = decode_send_params(params, "/params", codec)
        rec, start = self.core.send(message, self.incoming_push(config, codec, "/params"))
        await self.stream_send(rec, start, self.wrap)
        return _STREAMED

    async def get_task(self, params: dict[str, Any]) -> Any:
        """GetTask / tasks/get."""
        rec = self.core.get(_str_param(params, "id"))
        return self.task_json(rec, _int_param(params, "historyLength", 0, 1_000_000))

    async def list(self, params: dict[str, Any]) -> Any:
        """ListTasks (1.0 only)."""
        ctx, status, token = params.get("contextId"), params.get("status"), params.get("pageToken")
        after = params.get("statusTimestampAfter")
        strings = (("contextId", ctx), ("status", status), ("pageToken", token))
        for key, value in (*strings, ("statusTimestampAfter", after)):
            if value is not None and not isinstance(value, str):
                raise InvalidParams(f"/params/{key}: expected a string")
        include = params.get("includeArtifacts", False)
        if not isinstance(include, bool):
            raise InvalidParams("/params/includeArtifacts: expected a boolean")
        return list_tasks(
            self,
            context_id=ctx,
            state=status,
            page_size=_int_param(params, "pageSize", 1, 100),
            page_token=token,
            history_length=_int_param(params, "historyLength", 0, 1_000_000),
            include_artifacts=include,
            updated_after=after,
        )

    async def cancel(self, params: dict[str, Any]) -> Any:
        """CancelTask / tasks/cancel."""
        return self.task_json(self.core.cancel(_str_param(params, "id")))

    async def subscribe(self, params: dict[str, Any]) -> Any:
        """SubscribeToTask / tasks/resubscribe: snapshot (or replay), then live events."""
        rec = self.core.get(_str_param(params, "id"))
        after, first = self.subscription(rec)
        self.start_sse()
        await self.pump(rec, after, self.wrap, first=first)
        return _STREAMED

    # -- push-notification configurations (A2A 1.0 §3.1.7-3.1.10, §9.4.7) --------------

    async def push_create(self, params: dict[str, Any]) -> Any:
        """CreateTaskPushNotificationConfig / tasks/pushNotificationConfig/set."""
        self.core.push.require()
        codec = codec_for(self.version)
        config = read_push_config(params, codec, "/params")
        if config.task_id is None:
            raise InvalidParams("/params/taskId: expected a non-empty string")
        made = self.core.push.create(config.task_id, config, self.version, self.activated())
        return encode_push_config(made, self.version)

    async def push_get(self, params: dict[str, Any]) -> Any:
        """GetTaskPushNotificationConfig / tasks/pushNotificationConfig/get."""
        self.core.push.require()
        config_id: str | None
        if self.version == "1.0":
            task_id, config_id = _str_param(params, "taskId"), _str_param(params, "id")
        else:
            task_id = _str_param(params, "id")
            config_id = _opt_str_param(params, "pushNotificationConfigId")
        return encode_push_config(self.core.push.get(task_id, config_id), self.version)

    async def push_list(self, params: dict[str, Any]) -> Any:
        """ListTaskPushNotificationConfigs / tasks/pushNotificationConfig/list."""
        self.core.push.require()
        if self.version == "0.3":
            configs = self.core.push.list(_str_param(params, "id"))
            return [encode_push_config(c, "0.3") for c in configs]
        configs = self.core.push.list(_str_param(params, "taskId"))
        token = _opt_str_param(params, "pageToken")
        return page_of_push_configs(configs, _int_param(params, "pageSize", 1, 100), token)

    async def push_delete(self, params: dict[str, Any]) -> Any:
        """DeleteTaskPushNotificationConfig / tasks/pushNotificationConfig/delete."""
        self.core.push.require()
        if self.version == "1.0":
            self.core.push.delete(_str_param(params, "taskId"), _str_param(params, "id"))
            return {}
        self.core.push.delete(
            _str_param(params, "id"), _str_param(params, "pushNotificationConfigId")
        )
        return None

    async def no_extended_card(self, params: dict[str, Any]) -> Any:
        """GetExtendedAgentCard / agent/getAuthenticatedExtendedCard."""
        raise ExtendedAgentCardNotConfigured("this agent has no extended agent card")


_STREAMED = object()

METHODS_V1: dict[str, Method] = {
    "SendMessage": JsonRpcHandler.send,
    "SendStreamingMessage": JsonRpcHandler.stream,
    "GetTask": JsonRpcHandler.get_task,
    "ListTasks": JsonRpcHandler.list,
    "CancelTask": JsonRpcHandler.cancel,
    "SubscribeToTask": JsonRpcHandler.subscribe,
    "CreateTaskPushNotificationConfig": JsonRpcHandler.push_create,
    "GetTaskPushNotificationConfig": JsonRpcHandler.push_get,
    "ListTaskPushNotificationConfigs": JsonRpcHandler.push_list,
    "DeleteTaskPushNotificationConfig": JsonRpcHandler.push_delete,
    "GetExtendedAgentCard": JsonRpcHandler.no_extended_card,
}
METHODS_V03: dict[str, Method] = {
    "message/send": JsonRpcHandler.send,
    "message/stream": JsonRpcHandler.stream,
    "tasks/get": JsonRpcHandler.get_task,
    "tasks/cancel": JsonRpcHandler.cancel,
    "tasks/resubscribe": JsonRpcHandler.subscribe,
    "tasks/pushNotificationConfig/set": JsonRpcHandler.push_create,
    "tasks/pushNotificationConfig/get": JsonRpcHandler.push_get,
    "tasks/pushNotificationConfig/list": JsonRpcHandler.push_list,
    "tasks/pushNotificationConfig/delete": JsonRpcHandler.push_delete,
    "agent/getAuthenticatedExtendedCard": JsonRpcHandler.no_extended_card,
}
