"""What the tests of the tool-call bridges (Pydantic AI, OpenAI Agents) share on the
client's side: the fields a tool must receive exactly, a new task's first prompt, what a
completed task said."""

from __future__ import annotations

from hitl_nb.a2a import TaskState
from hitl_nb.client import PromptEvent, SyncHitlClient

#: What the tool must receive exactly: unicode, nested arrays, an integer past 2**64.
FIELDS = {"replicas": 2**70 + 1, "regions": [["eu-west", "zürich"], [], ["東京"]], "label": "🚀 ok"}


def first_prompt(client: SyncHitlClient, text: str) -> PromptEvent:
    """The prompt a new task on ``text`` stops on."""
    prompt = list(client.stream(text))[-1]
    assert isinstance(prompt, PromptEvent)
    return prompt


def said(client: SyncHitlClient, task_id: str) -> str:
    """The text a completed task ended with."""
    task = client.get_task(task_id)
    assert task.status.state is TaskState.COMPLETED
    assert task.status.message is not None
    return str(task.status.message.parts[0].text)
