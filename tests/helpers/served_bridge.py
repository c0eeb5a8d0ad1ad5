"""A tool-call bridge's test agent served in this process, the same way for every bridge
whose ``serve_agent`` takes a task store and a pause store (Pydantic AI, the OpenAI
Agents SDK, the Microsoft Agent Framework): its agent built on ``seen`` (what the tools
got) and ``runs`` (how often the model ran), served as "deploy agent" on a thread, gRPC
too when asked. The process-served twin is
:func:`~tests.helpers.agent_process.serve_until_killed`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

from hitl_nb.agent import Served

T = TypeVar("T", bound="ServedBridge")


class ServedBridge:
    """``with Bridge() as agent: agent.url``; ``agent.seen``: what the tools got,
    ``agent.runs``: how often the model ran. ``make(seen, runs)`` builds the framework's
    agent, ``serve`` is the bridge's ``serve_agent``, ``options`` its bridge-specific
    keywords (``schemas=``, ``run_config=``...)."""

    def __init__(
        self,
        make: Callable[[dict[str, Any], Counter[str]], Any],
        serve: Callable[..., Served],
        *,
        task_store: Any = None,
        pauses: Any = None,
        grpc: bool = False,
        **options: Any,
    ) -> None:
        self.grpc = grpc
        self.seen: dict[str, Any] = {}
        self.runs: Counter[str] = Counter()
        self.agent = make(self.seen, self.runs)
        self.task_store = task_store
        self.pauses = pauses
        self.served: Served | None = None
        self.url = ""
        self._serve = serve
        self._options = options

    def __enter__(self: T) -> T:
        store = self.task_store
        self.served = self._serve(
            self.agent,
            grpc_port=0 if self.grpc else None,
            name="deploy agent",
            task_store=store,
            pauses=self.pauses,
            on_stop=[store.engine.dispose] if store is not None else [],
            **self._options,
        )
        self.url = self.served.url
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.served is not None
        self.served.stop()
