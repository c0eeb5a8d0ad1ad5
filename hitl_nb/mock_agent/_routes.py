"""The mock agent's route table: which handler serves which path, under a prefix.

Relative to the prefix (``""`` standalone, anything when mounted)::

    GET  /.well-known/agent-card.json     the agent card (A2A §8)  (_card_http.py)
    POST /                                JSON-RPC 1.0 and 0.3   (_jsonrpc.py)
    POST /message:send                    HTTP+JSON (A2A §11)    (_rest.py)
    POST /message:stream
    GET  /tasks/{id}       GET /tasks
    POST /tasks/{id}:cancel
    POST /tasks/{id}:subscribe            (GET too)
    POST|GET   /tasks/{id}/pushNotificationConfigs          create, list
    GET|DELETE /tasks/{id}/pushNotificationConfigs/{cid}    get, delete
    GET  /extendedAgentCard                       ExtendedAgentCardNotConfigured

Errors on the HTTP+JSON binding are ``google.rpc.Status`` bodies with an ErrorInfo.
Kept apart from the handlers so that ``_http.py`` (the shared base handler) does not
import the binding modules that build on it.
"""

from __future__ import annotations

from typing import Any

from hitl_nb.mock_agent._card_http import AgentCardHandler
from hitl_nb.mock_agent._http import AgentService
from hitl_nb.mock_agent._jsonrpc import JsonRpcHandler
from hitl_nb.mock_agent._rest import (
    ExtendedCardHandler,
    MessageSendHandler,
    MessageStreamHandler,
    NotFoundHandler,
    PushConfigHandler,
    TaskActionHandler,
    TaskHandler,
    TasksHandler,
)

__all__ = ["make_handlers"]


def make_handlers(service: AgentService) -> list[tuple[str, type, dict[str, Any]]]:
    """The route table under ``service.prefix``, ready for ``Application.add_handlers``."""
    p = service.prefix.rstrip("/")
    service.prefix = p
    kw = {"service": service}
    tid = r"([^/:]+)"
    return [
        (rf"{p}/\.well-known/agent-card\.json", AgentCardHandler, kw),
        (rf"{p}/?", JsonRpcHandler, kw),
        (rf"{p}/message:send", MessageSendHandler, kw),
        (rf"{p}/message:stream", MessageStreamHandler, kw),
        (rf"{p}/tasks", TasksHandler, kw),
        (rf"{p}/tasks/{tid}", TaskHandler, kw),
        (rf"{p}/tasks/{tid}:(cancel|subscribe)", TaskActionHandler, kw),
        (rf"{p}/tasks/{tid}/pushNotificationConfigs/?(?:/([^/]+))?", PushConfigHandler, kw),
        (rf"{p}/extendedAgentCard", ExtendedCardHandler, kw),
        (rf"{p}/.*", NotFoundHandler, kw),
    ]
