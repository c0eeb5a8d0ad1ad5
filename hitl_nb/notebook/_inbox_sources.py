"""Where an inbox finds its open prompts: the Jupyter server's gateway, or the agents.

- :class:`GatewaySource`: ``GET {base_url}hitl/api/prompts`` of the server running this
  kernel (its watchers follow the registered tasks, its SQLite store keeps them, so the
  list outlives kernels); answers go through the gateway, which checks
  ``allowed_responders`` against the user the server vouches for (spec S-3), by the
  same calls and in the same words as a card in gateway mode (a
  :class:`~hitl_nb.notebook.GatewayLink`, connected on the first answer).
- :class:`AgentsSource`: no server extension; the kernel itself asks each agent for its
  tasks waiting for input (A2A ListTasks with state INPUT_REQUIRED) and reads the prompt
  in each. It lives only as long as the kernel. A task it lists is registered with the
  kernel's gateway when there is one, to be watched (:mod:`._announce`: JupyterLab's
  prompts panel lists it too).

Both run their requests as coroutines on the notebook's one shared loop thread (the
gateway link's blocking calls in a worker thread, off that loop).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hitl_nb.a2a import Task, TaskState
from hitl_nb.client import (
    FeedUpdate,
    GatewayClient,
    GatewayInfo,
    PromptEvent,
    feed_of,
    prompt_of,
)
from hitl_nb.errors import GatewayRefused, HitlError, MalformedPrompt, UnsupportedOperation
from hitl_nb.spec import PromptEnvelope

from ._announce import announce
from ._gateway_link import GatewayLink, connect
from ._link import Link

__all__ = ["AgentsSource", "GatewaySource", "InboxItem", "Listing", "gateway_item"]

log = logging.getLogger("hitl_nb.notebook")

#: Pages of ListTasks read from one agent per look (100 tasks a page).
MAX_PAGES = 10
_ENVELOPE_KEYS = ("prompt_id", "prompt", "response_schema", "deadline", "allowed_responders")


@dataclass(frozen=True)
class InboxItem:
    """One open prompt in an inbox.

    ``key`` is unique in the inbox; ``envelope`` the prompt (escape its text: S-1);
    ``registration`` the gateway's id of the task (gateway inboxes), ``task`` the task as
    the agent showed it (kernel inboxes). ``may_answer``/``why_not``: whether the user
    the gateway vouches for may answer (S-3; kernel inboxes: None, the card decides).
    ``answers``/``needed``: a consensus' answers so far, and how many must agree.
    """

    key: str
    agent_url: str
    task_id: str
    envelope: PromptEnvelope
    registration: str | None = None
    task: Task | None = None
    state: str = "open"
    may_answer: bool | None = None
    why_not: str | None = None
    answers: int = 0
    agreeing: int = 0
    needed: int = 1
    disagreement: bool = False

    @property
    def prompt_id(self) -> str:
        """The prompt's correlation id."""
        return self.envelope.prompt_id

    def signature(self) -> tuple[object, ...]:
        """What, when it changes, redraws the item's row."""
        return (
            self.key,
            self.state,
            self.may_answer,
            self.answers,
            self.agreeing,
            self.disagreement,
            self.envelope.deadline,
        )


@dataclass(frozen=True)
class Listing:
    """One look at the open prompts: the items (at most the limit), how many there are
    in all, and what could not be read (plain words, one line per problem)."""

    items: list[InboxItem]
    total: int
    problems: list[str]


class GatewaySource:
    """The open prompts of the Jupyter server's gateway; answers through it.

    ``agents``: only prompts of these agent URLs; ``responder``: only prompts that user
    may answer (``"me"``: the user of this kernel's token); ``due_within``: only
    deadlines at most that many seconds away; ``limit``: at most that many listed.
    """

    lives_with_kernel = False

    def __init__(
        self,
        info: GatewayInfo,
        *,
        agents: Sequence[str] | None = None,
        responder: str | None = None,
        due_within: float | None = None,
        limit: int = 100,
        timeout: float = 30.0,
    ) -> None:
        self.info = info
        self.agents = [a.rstrip("/") for a in agents] if agents else None
        self.filters: dict[str, Any] = {
            "limit": int(limit),
            "responder": responder or None,
            "due_within": due_within,
        }
        self.timeout = timeout
        self._client: GatewayClient | None = None
        self._link: GatewayLink | None = None
        # Checked envelopes by item key, with the JSON they came from: a prompt is
        # checked once, not on every look.
        self._envelopes: dict[str, tuple[dict[str, Any], PromptEnvelope]] = {}

    def where(self) -> str:
        """Where the prompts come from, in words."""
        host = (
            "the JupyterHub's hitl service" if self.info.on_hub else "the Jupyter server's gateway"
        )
        return f"{host} ({self.info.url})"

    def _listing(self) -> dict[str, Any]:
        # Blocking: run in a worker thread, off the shared loop.
        if self._client is None:
            self._client = GatewayClient(self.info, timeout=self.timeout)
        try:
            return self._client.prompts(**self.filters)
        except GatewayRefused as exc:
            raise HitlError(f"the gateway refused the listing (HTTP {exc.status}): {exc}") from exc

    async def list(self) -> Listing:
        """The open prompts now, soonest deadline first."""
        body = await asyncio.to_thread(self._listing)
        items, problems = [], []
        envelopes: dict[str, tuple[dict[str, Any], PromptEnvelope]] = {}
        for view in body.get("prompts") or []:
            if not isinstance(view, dict) or view.get("state") != "open":
                continue
            if self.agents is not None and str(view.get("agent_url", "")).rstrip("/") not in (
                self.agents
            ):
                continue
            try:
                item = gateway_item(view, self._envelopes)
            except (MalformedPrompt, KeyError, TypeError, ValueError) as exc:
                problems.append(f"a prompt of task {view.get('task_id')!r} is unreadable: {exc}")
                continue
            items.append(item)
            envelopes[item.key] = self._envelopes[item.key]
        self._envelopes = envelopes
        total = body.get("total")
        if self.agents is not None or not isinstance(total, int):
            total = len(items)
        return Listing(items, total, problems)

    def changes(self) -> AsyncIterator[FeedUpdate]:
        """The gateway's feed of the prompts this kernel's user may answer: the inbox
        looks again when it changes (:class:`~hitl_nb.notebook._follower.Looking`)."""
        return feed_of(self.info)

    async def gateway(self) -> GatewayLink:
        """The gateway as the cards answer through it (asks the server who we are, once)."""
        if self._link is None:
            self._link = await asyncio.to_thread(connect, self.info, self.timeout)
        return self._link

    async def aclose(self) -> None:
        """Close the connections."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._link is not None:
            self._link.close()
            self._link = None


def gateway_item(
    view: Mapping[str, Any], known: dict[str, tuple[dict[str, Any], PromptEnvelope]]
) -> InboxItem:
    """An item from the gateway's view of a prompt (its envelope checked, or taken from
    ``known`` when the same JSON was checked before)."""
    raw = {k: view[k] for k in _ENVELOPE_KEYS if view.get(k) is not None}
    key = f"{view['registration']}/{view['prompt_id']}"
    seen = known.get(key)
    if seen is not None and seen[0] == raw:
        envelope = seen[1]
    else:
        envelope = PromptEnvelope.from_json(raw, mode="orchestrator")
        known[key] = (raw, envelope)
    policy = view.get("policy")
    policy = policy if isinstance(policy, dict) else {}
    return InboxItem(
        key=key,
        agent_url=str(view["agent_url"]),
        task_id=str(view["task_id"]),
        envelope=envelope,
        registration=str(view["registration"]),
        state=str(view.get("state", "open")),
        may_answer=bool(view.get("may_answer")),
        why_not=view.get("why_not") if isinstance(view.get("why_not"), str) else None,
        answers=int(view.get("answers") or 0),
        agreeing=int(view.get("agreeing") or 0),
        needed=int(policy.get("needed") or 1),
        disagreement=bool(view.get("disagreement")),
    )


class AgentsSource:
    """Open prompts read from the agents by this kernel (no server extension).

    Every look asks each agent for its tasks in INPUT_REQUIRED (A2A 1.0 ListTasks) and
    reads the prompt in each task's status. ``client_options`` go to each agent's client
    (checked for ``call``, the public call that made the source).
    """

    lives_with_kernel = True

    def __init__(
        self,
        agents: Sequence[str],
        *,
        limit: int = 100,
        client_options: Mapping[str, Any] | None = None,
        call: str = "AgentsSource",
    ) -> None:
        if isinstance(agents, str) or not agents:
            raise ValueError("agents must be a list of agent URLs, e.g. agents=[url]")
        self.links: dict[str, Link] = {}
        try:
            for url in agents:
                self.links[url] = Link(url, client_options, call=call)
        except BaseException:
            self.close_links()
            raise
        self.limit = int(limit)
        #: Tasks registered with the kernel's gateway (to be watched), and those on the way.
        self._announced: set[tuple[str, str]] = set()
        self._announcing: set[asyncio.Task[Any]] = set()

    def _announce(self, url: str, task_id: str) -> None:
        if (url, task_id) in self._announced:
            return
        self._announced.add((url, task_id))
        job = asyncio.ensure_future(announce(url, task_id))
        self._announcing.add(job)
        job.add_done_callback(self._announcing.discard)

    def where(self) -> str:
        """Where the prompts come from, in words."""
        return "the agents, asked by this kernel (" + ", ".join(self.links) + ")"

    async def _tasks(self, url: str, link: Link) -> list[Task]:
        tasks: list[Task] = []
        token = None
        for _ in range(MAX_PAGES):
            page = await link.client.list_tasks(
                state=TaskState.INPUT_REQUIRED, page_size=100, page_token=token
            )
            tasks += page.tasks
            token = page.next_page_token
            if not token:
                break
        return tasks

    async def list(self) -> Listing:
        """The open prompts of every agent now, soonest deadline first."""
        items: list[InboxItem] = []
        problems: list[str] = []
        found = await asyncio.gather(
            *(self._tasks(url, link) for url, link in self.links.items()), return_exceptions=True
        )
        for (url, _link), result in zip(self.links.items(), found, strict=True):
            if isinstance(result, UnsupportedOperation):
                problems.append(f"{url} cannot list its tasks (it speaks A2A 0.3)")
                continue
            if isinstance(result, BaseException):
                problems.append(f"{url} could not be asked: {result}")
                continue
            for task in result:
                event = prompt_of(task)
                if isinstance(event, PromptEvent):
                    key = f"{url}|{task.id}/{event.prompt_id}"
                    items.append(InboxItem(key, url, task.id, event.envelope, task=task))
                    self._announce(url, task.id)
        items.sort(key=_soonest)
        return Listing(items[: self.limit], len(items), problems)

    async def aclose(self) -> None:
        """Close the connections of the agents' clients (on the loop they run on)."""
        for job in list(self._announcing):
            job.cancel()
        for link in self.links.values():
            if link.own:
                await link.client.aclose()

    def close_links(self) -> None:
        """Close every agent's client."""
        for link in self.links.values():
            link.close()


def _soonest(item: InboxItem) -> tuple[bool, float, str, str]:
    """Soonest deadline first; prompts without one after, the longest waiting first."""
    at = item.envelope.deadline_at
    since = item.task.status.timestamp if item.task is not None else None
    return (at is None, at.timestamp() if at else 0.0, str(since or ""), item.key)
