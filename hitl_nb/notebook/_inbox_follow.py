"""The inbox's background work, on the notebook's one shared loop thread.

:func:`follow` looks again every ``interval`` seconds (sooner when woken) while the
inbox lives, and holds it only weakly: a forgotten inbox is collected, and its looking
ends (closing its connections) at the next step. :func:`closed_elsewhere` tells an open
card of a kernel inbox what became of a prompt that left the list.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any

from hitl_nb.a2a import Task, TaskState
from hitl_nb.client import PromptEvent, prompt_of
from hitl_nb.errors import HitlError

from ._card import PromptCard
from ._inbox_sources import Listing

__all__ = ["closed_elsewhere", "follow"]

log = logging.getLogger("hitl_nb.notebook")


async def closed_elsewhere(card: PromptCard) -> None:
    """Tell an open card whose prompt left the inbox what became of its task."""
    try:
        task = await card.link.client.get_task(card.task.id)
    except HitlError:
        return  # the card says what happens when someone answers it
    if task.status.state is not TaskState.INPUT_REQUIRED or _open_prompt(task) != card.prompt_id:
        card.closed_by(task)


def _open_prompt(task: Task) -> str | None:
    found = prompt_of(task)
    return found.prompt_id if isinstance(found, PromptEvent) else None


async def follow(ref: weakref.ref[Any], interval: float) -> None:
    """Look every ``interval`` seconds (sooner when woken) while the inbox ``ref``
    refers to lives; show each look with its ``_apply``."""
    event = asyncio.Event()
    inbox = ref()
    if inbox is None:
        return
    inbox._wake = event
    source = inbox.source
    del inbox
    delay = interval
    while True:
        try:
            await asyncio.wait_for(event.wait(), delay)
            await asyncio.sleep(0.2)  # let the agent move on before looking
        except asyncio.TimeoutError:
            pass
        event.clear()
        if ref() is None:
            await source.aclose()  # forgotten: its connections go with it
            return
        try:
            listing = await source.list()
        except HitlError as exc:
            listing = None
            problem = str(exc)
            delay = min(delay * 2, 60.0)
        else:
            delay = interval
        inbox = ref()
        if inbox is None:
            await source.aclose()
            return
        try:
            if listing is not None:
                inbox._apply(listing)
            else:
                inbox._apply(Listing(inbox.items, inbox.total, [problem]))
        except Exception:  # a drawing problem must not end the following
            log.exception("the inbox could not show the prompts")
        del inbox
