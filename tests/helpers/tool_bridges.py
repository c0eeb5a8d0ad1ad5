"""What the tests of the tool-call bridges (Pydantic AI, OpenAI Agents, ADK) share on the
client's side: the fields a tool must receive exactly, a new task's first prompt, what a
completed task said, a message from a client that did not activate the extension."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from hitl_nb.a2a import TaskState
from hitl_nb.client import PromptEvent, SyncHitlClient
from tests.helpers.mock_agent_client import headers

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


def plain_send(http: httpx.Client, url: str, **message: Any) -> dict[str, Any]:
    """``SendMessage`` on JSON-RPC from a client that did not activate the extension (a
    plain A2A client): the task the agent answers with."""
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", **message}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    reply = http.post(url + "/", json=body, headers=headers(activated=False))
    task: dict[str, Any] = reply.json()["result"]["task"]
    return task
