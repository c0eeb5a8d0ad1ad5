"""The HTTP+JSON (REST) binding of the mock agent (A2A 1.0 §11).

Routes (under the agent's prefix): ``POST /message:send``, ``POST /message:stream``,
``GET /tasks/{id}``, ``GET /tasks``, ``POST /tasks/{id}:cancel``,
``POST|GET /tasks/{id}:subscribe``, the push-notification configurations
(``POST|GET /tasks/{id}/pushNotificationConfigs``, ``GET|DELETE
/tasks/{id}/pushNotificationConfigs/{configId}``, §11.3.3); ``/extendedAgentCard``
answers ExtendedAgentCardNotConfigured.
Errors are ``google.rpc.Status`` bodies with an ErrorInfo (and, for 422, the
``validation_errors`` detail). A missing ``A2A-Version`` is served as 1.0: these routes
exist only in 1.0.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import tornado.web

from hitl_nb.a2a import CODEC_V1, Message, encode_push_config
from hitl_nb.errors import (
    A2AError,
    ExtendedAgentCardNotConfigured,
    InternalError,
    InvalidParams,
    MethodNotAllowed,
    MethodNotFound,
    VersionNotSupported,
    reason_phrase,
)
from hitl_nb.mock_agent._http import BaseHandler
from hitl_nb.mock_agent._records import TaskRecord
from hitl_nb.mock_agent._requests import (
    decode_send_params,
    list_tasks,
    page_of_push_configs,
    parse_count,
    read_push_config,
)
from hitl_nb.mock_agent._views import task_view
from hitl_nb.mock_agent._wire_errors import rest_error_body

log = logging.getLogger("hitl_nb.mock_agent")

#: A2A 1.0 §14.1: the media type of HTTP+JSON payloads.
A2A_JSON = "application/a2a+json"

__all__ = [
    "ExtendedCardHandler",
    "MessageSendHandler",
    "MessageStreamHandler",
    "NotFoundHandler",
    "PushConfigHandler",
    "RestHandler",
    "TaskActionHandler",
    "TaskHandler",
    "TasksHandler",
]


class RestHandler(BaseHandler):
    """Base of the HTTP+JSON routes: 1.0 only; errors as google.rpc.Status bodies."""

    def prepare(self) -> None:
        """Echo the extension; refuse an A2A-Version other than 1.0."""
        self.echo_extensions("1.0")
        version = self.requested_version()
        # A missing version is served as 1.0 here: these routes exist only in 1.0.
        if version is not None and version not in ("1.0", "1"):
            raise VersionNotSupported(f"A2A version {version!r} is not supported; use 1.0")

    def send_error_body(self, exc: A2AError) -> None:
        """Answer with ``exc`` as a Status body (or end the stream if one started)."""
        if self._streaming:
            self.finish()
            return
        self.set_status(exc.http_status, reason_phrase(exc.http_status))
        self.set_header("Content-Type", A2A_JSON)
        self.finish(json.dumps(rest_error_body(exc)))

    def _handle_request_exception(self, e: BaseException) -> None:
        if isinstance(e, A2AError):
            self.send_error_body(e)
            return
        if isinstance(e, tornado.web.HTTPError) and e.status_code == 405:
            self.send_error_body(
                MethodNotAllowed(f"{self.request.method} is not allowed on {self.request.path}")
            )
            return
        if not isinstance(e, tornado.web.HTTPError) and not self._finished:
            # A bug must still answer with a Status body, as the JSON-RPC binding does.
            log.error("HTTP+JSON request failed", exc_info=e)
            self.send_error_body(InternalError(f"internal error: {type(e).__name__}: {e}"))
            return
        super()._handle_request_exception(e)

    def write_json(self, obj: Any) -> None:
        """Answer 200 with a JSON body."""
        self.set_header("Content-Type", A2A_JSON)
        self.finish(json.dumps(obj, separators=(",", ":")))

    def view(self, rec: TaskRecord, history_length: int | None = None) -> dict[str, Any]:
        """The task as this client may see it, as 1.0 JSON."""
        task = task_view(
            rec.task,
            activated=self.activated(),
            faults=self.service.faults,
            history_length=history_length,
        )
        return CODEC_V1.encode_task(task)

    def int_arg(self, name: str, low: int, high: int) -> int | None:
        """An optional integer query parameter within ``[low, high]``."""
        raw = self.get_query_argument(name, None)
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
        if raw is None and snake != name:  # protobuf JSON names: both spellings
            raw = self.get_query_argument(snake, None)
            name = snake
        if raw is None:
            return None
        value = parse_count(raw, f"query parameter {name}")
        if not low <= value <= high:
            raise InvalidParams(f"query parameter {name} must be an integer in [{low}, {high}]")
        return value


class MessageSendHandler(RestHandler):
    """``POST /message:send``."""

    async def post(self) -> None:
        """SendMessage; blocks until settled unless configuration.returnImmediately."""
        message, config = decode_send_params(self.read_body(), "", CODEC_V1)
        rec, _ = self.core.send(message, self.incoming_push(config, CODEC_V1, ""))
        if isinstance(rec, Message):  # a direct reply, no task
            self.write_json(CODEC_V1.encode_send_result(rec))
            return
        if not config.get("returnImmediately"):
            await self.core.settled(rec)
        self.write_json({"task": self.view(rec, config.get("historyLength"))})


class MessageStreamHandler(RestHandler):
    """``POST /message:stream``: SSE of bare StreamResponse objects."""

    async def post(self) -> None:
        """SendStreamingMessage: the events this message causes, as SSE."""
        message, config = decode_send_params(self.read_body(), "", CODEC_V1)
        rec, start = self.core.send(message, self.incoming_push(config, CODEC_V1, ""))
        await self.stream_send(rec, start, CODEC_V1.encode_stream_response)


class TaskHandler(RestHandler):
    """``GET /tasks/{id}``."""

    def get(self, task_id: str) -> None:
        """GetTask (query parameter historyLength)."""
        rec = self.core.get(task_id)
        self.write_json(self.view(rec, self.int_arg("historyLength", 0, 1_000_000)))


class TasksHandler(RestHandler):
    """``GET /tasks``: ListTasks with contextId, status, pageSize, pageToken filters."""

    def get(self) -> None:
        """ListTasks from query parameters."""
        state_arg = self.get_query_argument("status", None)
        include = self.get_query_argument("includeArtifacts", "false").lower()
        if include not in ("true", "false"):
            raise InvalidParams("query parameter includeArtifacts must be true or false")
        self.write_json(
            list_tasks(
                self,
                context_id=self.get_query_argument("contextId", None),
                state=state_arg,
                page_size=self.int_arg("pageSize", 1, 100),
                page_token=self.get_query_argument("pageToken", None),
                history_length=self.int_arg("historyLength", 0, 1_000_000),
                include_artifacts=include == "true",
                updated_after=self.get_query_argument("statusTimestampAfter", None),
            )
        )


class TaskActionHandler(RestHandler):
    """``POST /tasks/{id}:cancel`` and ``POST|GET /tasks/{id}:subscribe``."""

    async def post(self, task_id: str, action: str) -> None:
        """CancelTask or SubscribeToTask, by the action after the colon."""
        if action == "cancel":
            rec = self.core.cancel(task_id)
            self.write_json(self.view(rec))
            return
        rec = self.core.get(task_id)
        after, first = self.subscription(rec)
        self.start_sse()
        await self.pump(rec, after, CODEC_V1.encode_stream_response, first=first)

    async def get(self, task_id: str, action: str) -> None:
        """SubscribeToTask by GET (a2a-sdk routes allow it); GET :cancel is refused."""
        if action != "subscribe":
            raise MethodNotAllowed(f"GET is not allowed on :{action}; use POST")
        await self.post(task_id, action)


class PushConfigHandler(RestHandler):
    """``/tasks/{id}/pushNotificationConfigs[/{configId}]`` (A2A 1.0 §11.3.3)."""

    def prepare(self) -> None:
        """Version check, then PushNotificationNotSupported when push is off."""
        super().prepare()
        self.core.push.require()

    def post(self, task_id: str, config_id: str | None) -> None:
        """CreateTaskPushNotificationConfig (the body is a TaskPushNotificationConfig)."""
        if config_id is not None:
            raise MethodNotAllowed("POST goes to /tasks/{id}/pushNotificationConfigs")
        config = read_push_config(self.read_body(), CODEC_V1, "")
        made = self.core.push.create(task_id, config, "1.0", self.activated())
        self.write_json(encode_push_config(made, "1.0"))

    def get(self, task_id: str, config_id: str | None) -> None:
        """GetTaskPushNotificationConfig, or ListTaskPushNotificationConfigs without an id."""
        if config_id is not None:
            self.write_json(encode_push_config(self.core.push.get(task_id, config_id), "1.0"))
            return
        configs = self.core.push.list(task_id)
        token = self.get_query_argument("pageToken", None)
        self.write_json(page_of_push_configs(configs, self.int_arg("pageSize", 1, 100), token))

    def delete(self, task_id: str, config_id: str | None) -> None:
        """DeleteTaskPushNotificationConfig (idempotent)."""
        if config_id is None:
            raise MethodNotAllowed("DELETE needs /tasks/{id}/pushNotificationConfigs/{configId}")
        self.core.push.delete(task_id, config_id)
        self.write_json({})


class ExtendedCardHandler(RestHandler):
    """``GET /extendedAgentCard``: there is none."""

    def get(self) -> None:
        """Always ExtendedAgentCardNotConfigured."""
        raise ExtendedAgentCardNotConfigured("this agent has no extended agent card")


class NotFoundHandler(RestHandler):
    """Anything else under the prefix: 404 with a Status body."""

    def prepare(self) -> None:
        """Every method: MethodNotFound (404)."""
        raise MethodNotFound(f"no A2A route {self.request.method} {self.request.path}")
