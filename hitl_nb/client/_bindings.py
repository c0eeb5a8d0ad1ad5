"""The two A2A protocol bindings a client speaks: JSON-RPC (1.0 and 0.3) and HTTP+JSON.

Both take and return the neutral model; the wire version is the codec they were given.
JSON-RPC method names come from A2A §9 (1.0: ``SendMessage`` ...; 0.3: ``message/send``
...). HTTP+JSON routes are A2A 1.0 §11 (``POST /message:send``, ``GET /tasks/{id}``,
...); the 0.3 REST dialect is not spoken (0.3 agents are reached over JSON-RPC).
"""

from __future__ import annotations

import abc
import uuid
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

from hitl_nb.a2a import (
    A2AVersion,
    BindingName,
    Codec,
    Message,
    SendResult,
    StreamEvent,
    Task,
    TaskState,
)
from hitl_nb.errors import ProtocolViolation, UnsupportedOperation, WireDecodeError

from ._errors import from_jsonrpc_error, from_rest_error
from ._http import HttpSession, JsonAnswer
from ._inbound import settle_envelopes

#: One stream event: its SSE id, the decoded event, and the JSON it was decoded from.
WireEvent = tuple[str | None, StreamEvent, Any]

__all__ = ["Binding", "JsonRpcBinding", "RestBinding", "TaskPage", "WireEvent"]

T = TypeVar("T")

_METHODS = {
    "1.0": {
        "send": "SendMessage",
        "stream": "SendStreamingMessage",
        "get": "GetTask",
        "list": "ListTasks",
        "cancel": "CancelTask",
        "subscribe": "SubscribeToTask",
        "push_create": "CreateTaskPushNotificationConfig",
        "push_get": "GetTaskPushNotificationConfig",
        "push_list": "ListTaskPushNotificationConfigs",
        "push_delete": "DeleteTaskPushNotificationConfig",
    },
    "0.3": {
        "send": "message/send",
        "stream": "message/stream",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "subscribe": "tasks/resubscribe",
        "push_create": "tasks/pushNotificationConfig/set",
        "push_get": "tasks/pushNotificationConfig/get",
        "push_list": "tasks/pushNotificationConfig/list",
        "push_delete": "tasks/pushNotificationConfig/delete",
    },
}


@dataclass(frozen=True)
class TaskPage:
    """One page of ``list_tasks``: the tasks and the token of the next page (if any)."""

    tasks: list[Task]
    next_page_token: str | None = None
    total_size: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


class Binding(abc.ABC):
    """Operations of one A2A binding over one :class:`HttpSession`."""

    name: BindingName

    def __init__(self, http: HttpSession, url: str, codec: Codec) -> None:
        self.http = http
        self.url = url
        self.codec = codec
        self.version: A2AVersion = codec.version
        #: Reorder response_schema properties by the stable rule (an agent whose
        #: key order cannot be trusted); see :mod:`hitl_nb.client._inbound`.
        self.stable_order = False

    def _configuration(self, return_immediately: bool) -> dict[str, Any]:
        if self.version == "0.3":
            return {"blocking": not return_immediately}
        return {"returnImmediately": return_immediately}

    def _send_params(self, message: Message, return_immediately: bool) -> dict[str, Any]:
        return {
            "message": self.codec.encode_message(message),
            "configuration": self._configuration(return_immediately),
        }

    def _decode(self, decoder: Callable[[Any, str], T], value: Any, pointer: str, what: str) -> T:
        try:
            decoded = decoder(value, pointer)
        except WireDecodeError as exc:
            raise ProtocolViolation(f"{what}: the agent's answer does not decode: {exc}") from exc
        return settle_envelopes(decoded, stable_order=self.stable_order)  # type: ignore[no-any-return]

    def _page(self, body: Any, what: str) -> TaskPage:
        if not isinstance(body, dict) or not isinstance(body.get("tasks", []), list):
            raise ProtocolViolation(f"{what}: expected an object with a tasks array")
        tasks = [
            self._decode(self.codec.decode_task, t, f"/tasks/{i}", what)
            for i, t in enumerate(body.get("tasks", []))
        ]
        token = body.get("nextPageToken")
        total = body.get("totalSize")
        return TaskPage(
            tasks,
            token if isinstance(token, str) and token else None,
            total if isinstance(total, int) else None,
            body,
        )

    @abc.abstractmethod
    async def send(self, message: Message, *, return_immediately: bool = False) -> SendResult:
        """SendMessage: a Task or a Message."""

    @abc.abstractmethod
    def stream(self, message: Message) -> AsyncGenerator[WireEvent, None]:
        """SendStreamingMessage: ``(event_id, event)`` pairs."""

    @abc.abstractmethod
    def subscribe(
        self, task_id: str, last_event_id: str | None = None
    ) -> AsyncGenerator[WireEvent, None]:
        """SubscribeToTask (``tasks/resubscribe`` in 0.3), resuming after an event id."""

    @abc.abstractmethod
    async def get_task(self, task_id: str, history_length: int | None = None) -> Task:
        """GetTask."""

    @abc.abstractmethod
    async def list_tasks(self, filters: dict[str, Any]) -> TaskPage:
        """ListTasks (A2A 1.0)."""

    @abc.abstractmethod
    async def cancel(self, task_id: str) -> Task:
        """CancelTask."""

    @abc.abstractmethod
    async def push_call(
        self, op: str, task_id: str, config_id: str | None, body: dict[str, Any]
    ) -> Any:
        """One push-configuration method (``push_create``, ``push_get``, ``push_list``,
        ``push_delete``); ``body`` is the version's request object. Returns the result."""


class JsonRpcBinding(Binding):
    """JSON-RPC 2.0 over HTTP POST to the interface URL (A2A §9)."""

    name: BindingName = "JSONRPC"

    def _method(self, op: str) -> str:
        method = _METHODS[self.version].get(op)
        if method is None:
            raise UnsupportedOperation(f"A2A {self.version} JSON-RPC has no {op} method")
        return method

    def _envelope(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": str(uuid.uuid4()),
            "method": self._method(op),
            "params": params,
        }

    @staticmethod
    def _result(answer: JsonAnswer, what: str, request_id: str | None = None) -> Any:
        body = answer.body
        if isinstance(body, dict) and request_id is not None and "result" in body:
            if body.get("id") != request_id:
                raise ProtocolViolation(
                    f"{what}: answer is for request id {body.get('id')!r}, not {request_id!r}"
                )
        if isinstance(body, dict) and "error" in body:
            raise from_jsonrpc_error(body["error"])
        if isinstance(body, dict) and "result" in body:
            return body["result"]
        if answer.status >= 400:
            raise from_rest_error(answer.status, body)
        raise ProtocolViolation(f"{what}: not a JSON-RPC response (no result, no error)")

    async def _call(self, op: str, params: dict[str, Any]) -> Any:
        request = self._envelope(op, params)
        what = request["method"]
        answer = await self.http.request_json("POST", self.url, what, json_body=request)
        return self._result(answer, what, request["id"])

    async def _events(
        self, op: str, params: dict[str, Any], last_event_id: str | None
    ) -> AsyncGenerator[WireEvent, None]:
        request = self._envelope(op, params)
        what = request["method"]

        def refuse(answer: JsonAnswer) -> None:
            self._result(answer, what)  # raises for an error answer

        async for event_id, data in self.http.events(
            "POST", self.url, what, json_body=request, last_event_id=last_event_id, on_json=refuse
        ):
            if not isinstance(data, dict):
                raise ProtocolViolation(f"{what}: an event is not a JSON-RPC response object")
            if "error" in data:
                raise from_jsonrpc_error(data["error"])
            if "result" not in data:
                raise ProtocolViolation(f"{what}: an event has neither result nor error")
            event = self._decode(self.codec.decode_stream_response, data["result"], "/result", what)
            yield event_id, event, data["result"]

    async def send(self, message: Message, *, return_immediately: bool = False) -> SendResult:
        """SendMessage / ``message/send``."""
        result = await self._call("send", self._send_params(message, return_immediately))
        return self._decode(self.codec.decode_send_result, result, "/result", "SendMessage")

    def stream(self, message: Message) -> AsyncGenerator[WireEvent, None]:
        """SendStreamingMessage / ``message/stream``."""
        return self._events("stream", self._send_params(message, False), None)

    def subscribe(
        self, task_id: str, last_event_id: str | None = None
    ) -> AsyncGenerator[WireEvent, None]:
        """SubscribeToTask / ``tasks/resubscribe``."""
        return self._events("subscribe", {"id": task_id}, last_event_id)

    async def get_task(self, task_id: str, history_length: int | None = None) -> Task:
        """GetTask / ``tasks/get``."""
        params: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        result = await self._call("get", params)
        return self._decode(self.codec.decode_task, result, "/result", "GetTask")

    async def list_tasks(self, filters: dict[str, Any]) -> TaskPage:
        """ListTasks (1.0 only)."""
        params = dict(filters)
        if isinstance(params.get("status"), TaskState):
            params["status"] = self.codec.state_to_wire(params["status"])
        return self._page(await self._call("list", params), "ListTasks")

    async def cancel(self, task_id: str) -> Task:
        """CancelTask / ``tasks/cancel``."""
        result = await self._call("cancel", {"id": task_id})
        return self._decode(self.codec.decode_task, result, "/result", "CancelTask")

    async def push_call(
        self, op: str, task_id: str, config_id: str | None, body: dict[str, Any]
    ) -> Any:
        """The push-configuration methods (A2A §9.4.7; 0.3: ``tasks/pushNotificationConfig/*``)."""
        return await self._call(op, body)


class RestBinding(Binding):
    """HTTP+JSON (A2A 1.0 §11): resource URLs under the interface URL."""

    name: BindingName = "HTTP+JSON"

    def __init__(self, http: HttpSession, url: str, codec: Codec) -> None:
        super().__init__(http, url.rstrip("/"), codec)
        if self.version != "1.0":
            raise ValueError("the HTTP+JSON binding is spoken for A2A 1.0 only; use JSONRPC")

    def _task_url(self, task_id: str, suffix: str = "") -> str:
        return f"{self.url}/tasks/{quote(task_id, safe='')}{suffix}"

    @staticmethod
    def _ok(answer: JsonAnswer) -> Any:
        if answer.status >= 300:
            raise from_rest_error(answer.status, answer.body)
        return answer.body

    async def _events(
        self, url: str, what: str, body: Any, last_event_id: str | None
    ) -> AsyncGenerator[WireEvent, None]:
        def refuse(answer: JsonAnswer) -> None:
            if answer.status >= 300 or (isinstance(answer.body, dict) and "error" in answer.body):
                raise from_rest_error(max(answer.status, 400), answer.body)

        async for event_id, data in self.http.events(
            "POST", url, what, json_body=body, last_event_id=last_event_id, on_json=refuse
        ):
            if isinstance(data, dict) and "error" in data:
                raise from_rest_error(_status_of(data["error"]), data)
            yield event_id, self._decode(self.codec.decode_stream_response, data, "", what), data

    async def send(self, message: Message, *, return_immediately: bool = False) -> SendResult:
        """``POST /message:send``."""
        answer = await self.http.request_json(
            "POST",
            f"{self.url}/message:send",
            "SendMessage",
            json_body=self._send_params(message, return_immediately),
        )
        return self._decode(self.codec.decode_send_result, self._ok(answer), "", "SendMessage")

    def stream(self, message: Message) -> AsyncGenerator[WireEvent, None]:
        """``POST /message:stream``."""
        body = self._send_params(message, False)
        return self._events(f"{self.url}/message:stream", "SendStreamingMessage", body, None)

    def subscribe(
        self, task_id: str, last_event_id: str | None = None
    ) -> AsyncGenerator[WireEvent, None]:
        """``POST /tasks/{id}:subscribe``."""
        url = self._task_url(task_id, ":subscribe")
        return self._events(url, "SubscribeToTask", None, last_event_id)

    async def get_task(self, task_id: str, history_length: int | None = None) -> Task:
        """``GET /tasks/{id}``."""
        params = {"historyLength": history_length} if history_length is not None else None
        answer = await self.http.request_json(
            "GET", self._task_url(task_id), "GetTask", params=params
        )
        return self._decode(self.codec.decode_task, self._ok(answer), "", "GetTask")

    async def list_tasks(self, filters: dict[str, Any]) -> TaskPage:
        """``GET /tasks``."""
        params = dict(filters)
        if isinstance(params.get("status"), TaskState):
            params["status"] = self.codec.state_to_wire(params["status"])
        answer = await self.http.request_json(
            "GET", f"{self.url}/tasks", "ListTasks", params=params
        )
        return self._page(self._ok(answer), "ListTasks")

    async def cancel(self, task_id: str) -> Task:
        """``POST /tasks/{id}:cancel``."""
        answer = await self.http.request_json(
            "POST", self._task_url(task_id, ":cancel"), "CancelTask", json_body={}
        )
        return self._decode(self.codec.decode_task, self._ok(answer), "", "CancelTask")

    async def push_call(
        self, op: str, task_id: str, config_id: str | None, body: dict[str, Any]
    ) -> Any:
        """``/tasks/{id}/pushNotificationConfigs[/{configId}]`` (A2A §11.3.3)."""
        url = self._task_url(task_id, "/pushNotificationConfigs")
        if config_id is not None:
            url += "/" + quote(config_id, safe="")
        verb, what = _PUSH_ROUTES[op]
        if verb == "POST":
            answer = await self.http.request_json(verb, url, what, json_body=body)
        else:
            params = {k: v for k, v in body.items() if k in ("pageSize", "pageToken")}
            answer = await self.http.request_json(verb, url, what, params=params or None)
        return self._ok(answer)


_PUSH_ROUTES = {
    "push_create": ("POST", "CreateTaskPushNotificationConfig"),
    "push_get": ("GET", "GetTaskPushNotificationConfig"),
    "push_list": ("GET", "ListTaskPushNotificationConfigs"),
    "push_delete": ("DELETE", "DeleteTaskPushNotificationConfig"),
}


def _status_of(error: Any) -> int:
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and 400 <= code < 600 else 500


def binding_class(name: BindingName) -> type[Binding]:
    """The class that speaks a binding."""
    return JsonRpcBinding if name == "JSONRPC" else RestBinding
