"""A scripted agent with one task (``t1``) asking one prompt, that keeps its history or
none (A2A lets an agent keep none, or return only its latest messages): the rule of
exactly-once answers (:func:`hitl_nb.client.fate`) both ways, for the client's
``respond()`` and the gateway's forward.

It accepts one answer and refuses every later one with 409 (§Acceptance and rejection);
``lose`` makes it drop the connection of the first send: ``"after"`` it accepted the
answer, or ``"before"`` it read it, while another answer is accepted instead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from hitl_nb.spec import RESPONSE_KEY
from tests.helpers import wire
from tests.helpers.scripted import rpc_agent
from tests.helpers.tiny_server import Conn, Request, TinyServer

__all__ = ["OnePromptAgent"]


class OnePromptAgent:
    """Task ``t1`` (context ``ctx-1``) asking ``env``; ``sends`` are the answers it got."""

    def __init__(
        self, *, keeps_history: bool, lose: Literal["after", "before"] | None = None
    ) -> None:
        self.env = wire.envelope()
        self.prompt_id: str = self.env["prompt_id"]
        self.keeps_history = keeps_history
        self.lose = lose
        self.sends: list[dict[str, Any]] = []
        self.accepted: str | None = None  # the messageId of the answer it took
        self._history: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def answer_elsewhere(self) -> None:
        """Someone else's answer is accepted: the prompt closes."""
        self._accept(
            {
                "messageId": "m-elsewhere",
                "role": "ROLE_USER",
                "taskId": "t1",
                "contextId": "ctx-1",
                "parts": [{"text": "no"}],
                "metadata": {
                    RESPONSE_KEY: {"prompt_id": self.prompt_id, "payload": {"approved": False}}
                },
            }
        )

    def _accept(self, message: dict[str, Any]) -> None:
        self._history.append(message)
        self.accepted = message["messageId"]

    def task(self) -> dict[str, Any]:
        """The task as GetTask returns it (its history only if it keeps one)."""
        waiting = self.accepted is None
        task = wire.task(
            "t1", "input_required" if waiting else "working", self.env if waiting else None
        )
        if self.keeps_history:
            task["history"] = list(self._history)
        return task

    def _get(self, request: Request, conn: Conn) -> None:
        with self._lock:
            task = self.task()
        conn.answer(wire.rpc(task, request.json()["id"]))

    def _send(self, request: Request, conn: Conn) -> None:
        rid = request.json()["id"]
        message = request.json()["params"]["message"]
        with self._lock:
            self.sends.append(message)
            first = len(self.sends) == 1
            if first and self.lose == "before":
                self.answer_elsewhere()
                conn.cut()
                return
            if self.accepted is not None:
                refusal = wire.rpc_error(-32010, "hitl_already_answered_or_unknown", req_id=rid)
                conn.answer(refusal)
                return
            self._accept(message)
            task = self.task()
        if first and self.lose == "after":
            conn.cut()
        else:
            conn.answer(wire.rpc({"task": task}, rid))

    @contextmanager
    def serve(self) -> Iterator[TinyServer]:
        """The agent on 127.0.0.1 (its card, then JSON-RPC)."""
        with rpc_agent({"GetTask": self._get, "SendMessage": self._send}) as server:
            yield server
