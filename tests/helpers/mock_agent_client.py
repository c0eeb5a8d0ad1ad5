"""A bare-HTTP driver for the mock agent's tests: JSON-RPC calls, REST calls, SSE reading.

Deliberately not hitl_nb.client: the agent is tested on the wire, byte for byte.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import httpx

from hitl_nb.a2a._sse import SSEParser
from hitl_nb.spec import EXTENSION_URI, RESPONSE_KEY

URI = EXTENSION_URI


def headers(version: str | None = "1.0", activated: bool = True, **extra: str) -> dict[str, str]:
    """Request headers: A2A-Version (unless None) and the extension (unless not activated)."""
    out: dict[str, str] = {}
    if version is not None:
        out["A2A-Version"] = version
    if activated:
        out["A2A-Extensions" if version != "0.3" else "X-A2A-Extensions"] = URI
    out.update(extra)
    return out


def user_message(
    parts: list[dict[str, Any]] | None = None,
    *,
    task_id: str | None = None,
    response: dict[str, Any] | None = None,
    v03: bool = False,
) -> dict[str, Any]:
    """A user message in 1.0 (or 0.3) JSON."""
    msg: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "role": "user" if v03 else "ROLE_USER",
        "parts": parts if parts is not None else [{"text": "hello"}],
    }
    if v03:
        msg["kind"] = "message"
        msg["parts"] = [
            {"kind": "text", **p} if "text" in p else {"kind": "data", **p} for p in msg["parts"]
        ]
    if task_id is not None:
        msg["taskId"] = task_id
    if response is not None:
        msg["metadata"] = {RESPONSE_KEY: response}
    return msg


class Wire:
    """Synchronous calls to one agent URL."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.http = httpx.Client(timeout=10)
        self._ids = 0

    def close(self) -> None:
        self.http.close()

    def rpc_raw(
        self, body: Any, *, hdrs: dict[str, str] | None = None, content: bytes | None = None
    ) -> httpx.Response:
        if content is not None:
            return self.http.post(self.url + "/", content=content, headers=hdrs or {})
        return self.http.post(self.url + "/", json=body, headers=hdrs if hdrs is not None else {})

    def rpc(
        self,
        method: str,
        params: Any,
        *,
        version: str | None = "1.0",
        activated: bool = True,
    ) -> tuple[httpx.Response, dict[str, Any]]:
        self._ids += 1
        body = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        r = self.rpc_raw(body, hdrs=headers(version, activated))
        return r, r.json()

    def result(self, method: str, params: Any, **kw: Any) -> Any:
        r, body = self.rpc(method, params, **kw)
        assert r.status_code == 200, r.text
        assert "result" in body, body
        return body["result"]

    def start(
        self, scenario: str = "approval", *, activated: bool = True, **options: Any
    ) -> dict[str, Any]:
        """Create a task with ``scenario``; returns the 1.0 Task JSON."""
        part: dict[str, Any] = (
            {"data": {"scenario": scenario, **options}} if options else {"text": scenario}
        )
        res = self.result("SendMessage", {"message": user_message([part])}, activated=activated)
        task: dict[str, Any] = res["task"]
        return task

    def answer(
        self,
        task_id: str,
        prompt_id: str,
        payload: Any,
        *,
        version: str | None = "1.0",
        activated: bool = True,
    ) -> tuple[httpx.Response, dict[str, Any]]:
        msg = user_message(
            [{"text": "answer"}],
            task_id=task_id,
            response={"prompt_id": prompt_id, "payload": payload},
            v03=version != "1.0",
        )
        method = "SendMessage" if version == "1.0" else "message/send"
        return self.rpc(method, {"message": msg}, version=version, activated=activated)

    def get_task(self, task_id: str, **kw: Any) -> dict[str, Any]:
        task: dict[str, Any] = self.result("GetTask", {"id": task_id}, **kw)
        return task

    def stream(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        hdrs: dict[str, str] | None = None,
    ) -> tuple[httpx.Response, list[tuple[str | None, Any]]]:
        """Read a whole SSE response (until the server closes it)."""
        events: list[tuple[str | None, Any]] = []
        parser = SSEParser()
        with self.http.stream(method, self.url + path, json=body, headers=hdrs or {}) as r:
            if not r.headers.get("content-type", "").startswith("text/event-stream"):
                r.read()
                return r, [(None, r.json())]
            for chunk in r.iter_bytes():
                for ev in parser.feed(chunk):
                    events.append((ev.id, json.loads(ev.data)))
        return r, events

    def rpc_stream(
        self,
        method: str,
        params: Any,
        *,
        version: str | None = "1.0",
        activated: bool = True,
        last_event_id: str | None = None,
    ) -> tuple[httpx.Response, list[tuple[str | None, Any]]]:
        self._ids += 1
        body = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        hdrs = headers(version, activated)
        if last_event_id is not None:
            hdrs["Last-Event-ID"] = last_event_id
        return self.stream("POST", "/", body=body, hdrs=hdrs)


class Collector:
    """Reads one SSE stream in a thread, so a test can act while it listens."""

    def __init__(
        self, url: str, path: str, body: Any, hdrs: dict[str, str], method: str = "POST"
    ) -> None:
        self.events: list[tuple[str | None, Any]] = []
        self.status: int | None = None
        self.error: BaseException | None = None
        self._cond = threading.Condition()
        self._done = False
        self._thread = threading.Thread(
            target=self._run, args=(url.rstrip("/") + path, body, hdrs, method), daemon=True
        )
        self._thread.start()

    def _run(self, url: str, body: Any, hdrs: dict[str, str], method: str) -> None:
        parser = SSEParser()
        try:
            with httpx.Client(timeout=30) as http:
                with http.stream(method, url, json=body, headers=hdrs) as r:
                    self.status = r.status_code
                    for chunk in r.iter_bytes():
                        for ev in parser.feed(chunk):
                            with self._cond:
                                self.events.append((ev.id, json.loads(ev.data)))
                                self._cond.notify_all()
        except BaseException as exc:  # reported to the test through .error
            self.error = exc
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def wait_for(self, n: int, timeout: float = 10.0) -> list[tuple[str | None, Any]]:
        """Wait until ``n`` events arrived (or the stream ended); returns them all."""
        with self._cond:
            self._cond.wait_for(lambda: len(self.events) >= n or self._done, timeout)
            return list(self.events)

    def join(self, timeout: float = 10.0) -> list[tuple[str | None, Any]]:
        """Wait for the server to close the stream."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the stream did not end"
        return list(self.events)


def envelope_of(task_or_status_holder: dict[str, Any]) -> dict[str, Any]:
    """The envelope in a 1.0 Task's (or status update's) status message."""
    env: dict[str, Any] = task_or_status_holder["status"]["message"]["metadata"][URI]
    return env
