"""Test vectors written for these tests: cards, envelopes, tasks, SSE bodies (A2A 1.0 and 0.3)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from hitl_nb.a2a._sse import encode_event
from hitl_nb.spec import EXTENSION_URI

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["approved"],
    "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string"}},
}


def card(
    url: str,
    *,
    binding: str = "JSONRPC",
    version: str = "1.0",
    extension: bool = True,
    more: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """A 1.0 agent card with one interface (plus ``more``)."""
    interfaces = [{"url": url, "protocolBinding": binding, "protocolVersion": version}]
    exts = [{"uri": EXTENSION_URI, "required": False, "params": {}}] if extension else []
    return {
        "name": "test agent",
        "description": "for tests",
        "version": "1",
        "supportedInterfaces": interfaces + (more or []),
        "capabilities": {"streaming": True, "extensions": exts},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


def card_v03(url: str, *, extension: bool = True) -> dict[str, Any]:
    """A 0.3 agent card (url + preferredTransport)."""
    exts = [{"uri": EXTENSION_URI, "required": False, "params": {}}] if extension else []
    return {
        "protocolVersion": "0.3.0",
        "name": "old agent",
        "description": "0.3",
        "url": url,
        "preferredTransport": "JSONRPC",
        "version": "1",
        "capabilities": {"streaming": True, "extensions": exts},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


def envelope(prompt: str = "Approve?", **extra: Any) -> dict[str, Any]:
    """A valid prompt envelope with a fresh prompt_id."""
    env = {"prompt_id": str(uuid.uuid4()), "prompt": prompt, "response_schema": APPROVAL_SCHEMA}
    env.update(extra)
    return env


def status(state: str, env: dict[str, Any] | None = None, text: str = "") -> dict[str, Any]:
    """A 1.0 TaskStatus; an envelope goes into the message metadata."""
    out: dict[str, Any] = {"state": f"TASK_STATE_{state.upper()}"}
    if env is not None or text:
        out["message"] = {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_AGENT",
            "parts": [{"text": text or "input needed"}],
            **({"metadata": {EXTENSION_URI: env}} if env is not None else {}),
        }
    return out


def task(task_id: str, state: str, env: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 1.0 Task."""
    return {"id": task_id, "contextId": "ctx-1", "status": status(state, env)}


def status_update(task_id: str, state: str, env: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 1.0 StreamResponse holding a statusUpdate."""
    return {"statusUpdate": {"taskId": task_id, "contextId": "ctx-1", "status": status(state, env)}}


def rpc(result: Any, req_id: Any = 1) -> dict[str, Any]:
    """A JSON-RPC success response."""
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


def rpc_error(code: int, message: str, data: Any = None, req_id: Any = 1) -> dict[str, Any]:
    """A JSON-RPC error response."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": err}


def sse(*payloads: Any, ids: list[str] | None = None, crlf: bool = False) -> bytes:
    """SSE bytes for JSON payloads, optionally with ids and CRLF line ends."""
    out = b""
    for i, payload in enumerate(payloads):
        raw = encode_event(json.dumps(payload), id=ids[i] if ids else None)
        out += raw.replace(b"\n", b"\r\n") if crlf else raw
    return out
