"""A Slack app's messages kept telling what became of their prompt.

Each message the app posted about a prompt is a row (:class:`SlackRecords`); while its
prompt is open :class:`SlackBoard` looks at it in each round, and when what it should
show changed, updates it (``chat.update``): a consensus' ballots ("1 of 2 agree so
far"), the answer on its way, then the end: answered (by whom; the answer itself is
never shown), expired, or closed by the agent. At the end the buttons go. The round
runs every ``poll`` seconds and at once when woken (after an answer from Slack), on
every replica: the database says what a message shows, and a change is marked there
once (a compare-and-set), so replicas do not fight; two updating to the same words at
once is harmless.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from hitl_nb._sync import wait_event
from hitl_nb.errors import DeliveryFailed
from hitl_nb.gateway._schema import audience
from hitl_nb.gateway._slack_store import SlackPost
from hitl_nb.gateway._store import GatewayStore, StoreUnavailable
from hitl_nb.gateway._views import PromptState
from hitl_nb.notify import SlackApi
from hitl_nb.policy import tally

__all__ = ["SlackBoard", "status_of"]

log = logging.getLogger("hitl_nb.gateway")


def _names(names: list[str]) -> str:
    """User names (the host's, not the agent's), escaped as Slack's text wants."""
    said = ", ".join(names) if names else "someone"
    return said.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


async def status_of(store: GatewayStore, post: SlackPost) -> tuple[str, bool]:
    """What ``post`` should show now ("": nothing yet), and whether its prompt ended."""
    row, fwd = await store.prompt_and_forward(post.reg_id, post.prompt_id)
    if row is None:
        return "", False
    if fwd is not None and fwd.state == PromptState.FORWARDED:
        return (
            f":white_check_mark: Answered by {_names(fwd.responders)}: the agent has the answer.",
            True,
        )
    if fwd is not None and fwd.state == PromptState.FORWARDING:
        return f":hourglass: Answered by {_names(fwd.responders)}: on its way to the agent.", False
    if row.closed == "expired":
        return ":no_entry: Expired: nobody answered before the deadline.", True
    if row.closed is not None:
        return ":no_entry: Closed: the agent no longer asks this.", True
    _, needed = audience(row.envelope)
    if needed > 1:
        ballots = await store.ballots(post.reg_id, post.prompt_id)
        if ballots:
            count = tally([b.payload for b in ballots], needed)
            differ = " (the answers differ)" if count.disagreement else ""
            return f"{count.agreeing} of {needed} agree so far{differ}.", False
    return "", False


def updated_blocks(post: SlackPost, status: str, done: bool) -> list[dict[str, Any]]:
    """``post``'s blocks with ``status`` shown above its buttons (gone when ``done``)."""
    kept = [
        b
        for b in post.blocks
        if not (b.get("type") == "context" and b.get("block_id") == "hitl-status")
    ]
    actions = [b for b in kept if b.get("type") == "actions"]
    body = [b for b in kept if b.get("type") != "actions"]
    if status:
        body.append(
            {
                "type": "context",
                "block_id": "hitl-status",
                "elements": [{"type": "mrkdwn", "text": status}],
            }
        )
    return body if done else body + actions


class SlackBoard:
    """Keeps posted messages up to date (see the module docstring)."""

    def __init__(self, store: GatewayStore, api: SlackApi, *, poll: float = 1.0) -> None:
        self.store = store
        self.api = api
        self.poll = poll
        #: Messages updated so far (for tests and benchmarks).
        self.updates = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    def start(self) -> None:
        """Run rounds in the background of the running loop."""
        if self._task is None:
            self._stopping = False
            self._task = asyncio.ensure_future(self._run())

    def wake(self) -> None:
        """Something changed: look now."""
        self._wake.set()

    async def stop(self) -> None:
        """Stop after the round under way."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        self._wake.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 5.0)
        except asyncio.TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                await self.round()
            except StoreUnavailable as exc:
                log.warning("hitl-nb slack: messages not updated now: %s", exc)
            except Exception:
                log.exception("hitl-nb slack: a round of updates failed")
            if self._stopping:
                break
            await wait_event(self._wake, self.poll)

    async def round(self) -> int:
        """Update every live message whose words changed; how many were."""
        done = 0
        for post in await self.store.slack.live():
            status, ended = await status_of(self.store, post)
            if status == post.shown and ended == post.done:
                continue
            body = {
                "channel": post.channel,
                "ts": post.ts,
                "text": f"{post.text}\n\n{status}" if status else post.text,
                "blocks": updated_blocks(post, status, ended),
            }
            try:
                await self.api.call("chat.update", body)
            except DeliveryFailed as exc:
                log.info("hitl-nb slack: a message not updated: %s", exc)
                if not exc.permanent:
                    continue  # the next round tries again
            if await self.store.slack.show(post, status, ended):
                done += 1
        self.updates += done
        return done
