"""Tasks at a mock agent for the gateway's tests: started, and what reached the agent."""

from __future__ import annotations

from typing import Any

from hitl_nb.a2a import Task, TaskState
from hitl_nb.client import HitlClient


async def start_task(url: str, scenario: str, **options: Any) -> Task:
    """Start a task of ``scenario`` on the agent; it waits for its first prompt."""
    async with HitlClient(url) as client:
        task = await client.send({"scenario": scenario, **options})
        assert isinstance(task, Task)
        assert task.status.state is TaskState.INPUT_REQUIRED, task.status
        return task


async def answers_at_agent(url: str, task_id: str) -> list[dict[str, Any]]:
    """The hitl_response_for objects in the task's history at the agent."""
    async with HitlClient(url) as client:
        task = await client.get_task(task_id)
    return [
        m.metadata["hitl_response_for"]
        for m in task.history
        if m.metadata and "hitl_response_for" in m.metadata
    ]
