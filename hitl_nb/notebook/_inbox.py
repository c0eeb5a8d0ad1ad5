"""Inbox: every open prompt, across tasks and agents, as a live list in the notebook.

::

    from hitl_nb.notebook import Inbox
    inbox = Inbox()                        # in a Jupyter server with hitl-nb's extension
    inbox                                  # the list; "Open" shows a prompt's card
    inbox.answer(prompt_id, {"approve": True})      # ... or answer from code

    inbox = Inbox(agents=[agent_url])      # without the extension: asked by this kernel

In a kernel of a Jupyter server with the extension, the list is the gateway's
(``GET {base_url}hitl/api/prompts``): the server watches the registered tasks and keeps
their prompts, so prompts of tasks registered from kernels that have since stopped are
there too, and answers go through the gateway as the user the server vouches for (S-3).
Without it, ``agents=[...]`` are asked by this kernel (ListTasks, INPUT_REQUIRED) and
answered directly; that inbox lives only as long as the kernel.

The list follows by itself: one look every ``poll_interval`` seconds on the notebook's
one shared thread, and at once after an answer (:class:`~._follower.Looking`). A look
that finds nothing new sends nothing to the browser, and the deadline countdowns tick in
CSS (:mod:`._clock`). Closing the inbox (or a ``with`` block), running its cell again,
or interrupting a cell stops the looking; so does forgetting the inbox. A prompt opened
here is a :class:`~hitl_nb.notebook.GatewayCard` (gateway inboxes) or a
:class:`~hitl_nb.notebook.PromptCard` (kernel inboxes; one whose prompt leaves the list
asks its task why).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as W

from hitl_nb.a2a import TaskState
from hitl_nb.client import GatewayInfo, PromptEvent, find_gateway, prompt_of
from hitl_nb.errors import GatewayUnavailable, HitlError

from ._card import GatewayCard, PromptCard
from ._deadline import deadline_text
from ._follower import Looking
from ._inbox_rows import discard, row_widget, weakly
from ._inbox_sources import AgentsSource, GatewaySource, InboxItem, Listing
from ._link import Link
from ._outcomes import HUB, SERVER, Outcome
from ._senders import GatewaySender
from ._style import COLORS, MUTED, esc
from ._worker import shared_loop, track

__all__ = ["Inbox"]

Card = GatewayCard | PromptCard


class Inbox:
    """The open prompts of many tasks and agents, as a live list; each opens as a card.

    ``agents``: agent URLs. Inside a Jupyter server with hitl-nb's extension they filter
    the server's list; without one the kernel asks these agents itself (the inbox then
    lives only as long as the kernel). ``gateway``: ``"auto"`` (the server running this
    kernel, if any), a :class:`~hitl_nb.client.GatewayInfo`, or None (never the server).
    ``responder``: only prompts this user may answer (``"me"``: you), gateway inboxes;
    in kernel inboxes it is who answers (S-3, as for a ``PromptCard``).
    ``due_within``: only deadlines at most that many seconds away (gateway inboxes).
    ``limit``: at most that many listed (soonest deadline first); ``page_size``: rows
    drawn at a time (Previous / Next move between pages). ``poll_interval``: seconds
    between looks (a gateway inbox looks when the gateway's feed says its list changed,
    and while that feed is heard its timer looks only every 30 s).

    Use it as a context manager or call :meth:`close`. Attributes: ``items`` (the open
    prompts as last seen), ``total``, ``problems``, ``cards`` (opened, by item key),
    ``lives_with_kernel``, ``widget``.
    """

    def __init__(
        self,
        agents: Sequence[str] | None = None,
        *,
        gateway: GatewayInfo | str | None = "auto",
        responder: str | None = None,
        due_within: float | None = None,
        limit: int = 200,
        page_size: int = 25,
        poll_interval: float = 5.0,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not page_size >= 1:
            raise ValueError(f"page_size must be at least 1, not {page_size!r}")
        if not poll_interval > 0:
            raise ValueError(f"poll_interval must be a positive number, not {poll_interval!r}")
        if isinstance(agents, str):
            agents = [agents]
        if gateway == "auto":
            try:
                info = find_gateway(strict=True)
            except GatewayUnavailable:
                if not agents:
                    raise  # the server is there but silent: say so, never "no server"
                info = None
        elif isinstance(gateway, str):
            raise ValueError('gateway must be "auto", a GatewayInfo or None')
        else:
            info = gateway
        self.source: GatewaySource | AgentsSource
        if info is not None:
            self.source = GatewaySource(
                info, agents=agents, responder=responder, due_within=due_within, limit=limit
            )
            self._responder = None
        elif agents:
            self.source = AgentsSource(
                agents, limit=limit, client_options=client_options, call="Inbox"
            )
            self._responder = responder
        else:
            raise HitlError(
                "no Jupyter server with hitl-nb's extension runs this kernel, so there is "
                "no shared inbox here; name the agents to ask: Inbox(agents=[url])"
            )
        self.poll_interval = float(poll_interval)
        self.items: list[InboxItem] = []
        self.total = 0
        self.problems: list[str] = []
        self.cards: dict[str, Card] = {}
        self.closed = False
        self._lock = threading.RLock()
        self._rows: dict[str, tuple[tuple[object, ...], W.HBox]] = {}
        self._selected: str | None = None
        self.page_size = int(page_size)
        self.page = 0
        self._loop = shared_loop()
        self._stop_note = ""
        self.title = W.HTML()
        self.title.add_class("hitl-inbox-title")
        self.list = W.VBox()
        self.list.add_class("hitl-inbox-list")
        self.previous = W.Button(
            description="Previous", tooltip="the page before", layout=W.Layout(width="auto")
        )
        self.next = W.Button(
            description="Next", tooltip="the page after", layout=W.Layout(width="auto")
        )
        self.previous.on_click(weakly(self, "turn", -1))
        self.next.on_click(weakly(self, "turn", 1))
        self.where = W.HTML()
        self.pages = W.HBox(
            [self.previous, self.where, self.next],
            layout=W.Layout(display="none", align_items="center"),
        )
        self.pages.add_class("hitl-inbox-pages")
        self.detail = W.VBox()
        self.detail.add_class("hitl-inbox-detail")
        self.widget = W.VBox([self.title, self.list, self.pages, self.detail])
        self.widget.add_class("hitl-inbox")
        self._apply(self._first_look())
        track(self)
        feed = self.source.changes if isinstance(self.source, GatewaySource) else None
        self._looking = Looking(self._loop, self, self.source, self.poll_interval, feed)

    @property
    def lives_with_kernel(self) -> bool:
        """True when this kernel itself asks the agents (no server keeps the prompts)."""
        return self.source.lives_with_kernel

    # --- looking --------------------------------------------------------------------------

    def _first_look(self) -> Listing:
        try:
            return self._loop.run(self.source.list(), timeout=60)
        except (HitlError, TimeoutError) as exc:
            return Listing([], 0, [f"the prompts could not be read: {exc}"])

    def refresh(self) -> list[InboxItem]:
        """Look now (blocking); returns the open prompts."""
        self._apply(self._loop.run(self.source.list(), timeout=60))
        return list(self.items)

    def wake(self) -> None:
        """Look again soon (an answer was given)."""
        self._looking.wake()

    def _apply(self, listing: Listing) -> None:
        """Show ``listing``: new rows appear, rows of prompts no longer open leave. Only
        the current page has row widgets; a look that changes nothing sends nothing."""
        with self._lock:
            if self.closed:
                return
            self.items, self.total, self.problems = listing.items, listing.total, listing.problems
            listed = {item.key for item in listing.items}
            for key in [k for k in self.cards if k not in listed]:
                card = self.cards[key]
                if isinstance(card, GatewayCard):
                    card.gone()
                elif card.is_open and isinstance(self.source, AgentsSource):
                    # Answered elsewhere, closed or expired: the card asks the task why.
                    self._loop.submit(_closed_elsewhere(card))
            self._draw_page()
            title = self._title_html()
            if self.title.value != title:
                self.title.value = title

    def _unreadable(self, problem: str) -> None:
        """A look could not read the list: say why, keep the prompts last seen."""
        self._apply(Listing(self.items, self.total, [problem]))

    def _draw_page(self) -> None:
        pages = max(1, -(-len(self.items) // self.page_size))
        self.page = min(self.page, pages - 1)
        start = self.page * self.page_size
        shown = self.items[start : start + self.page_size]
        rows: dict[str, tuple[tuple[object, ...], W.HBox]] = {}
        for item in shown:
            row = self._rows.get(item.key)
            if row is None or row[0] != item.signature():
                row = (item.signature(), row_widget(item, weakly(self, "open", item.key)))
            rows[item.key] = row
        gone = [w for k, (_s, w) in self._rows.items() if rows.get(k, (None, None))[1] is not w]
        self._rows = rows
        children = tuple(row[1] for row in rows.values())
        if children != tuple(self.list.children):  # nothing new: nothing sent
            self.list.children = children
        for widget in gone:
            discard(widget)  # a row off the page costs nothing: its comms go
        display = "flex" if pages > 1 else "none"
        if self.pages.layout.display != display:
            self.pages.layout.display = display
        where = (
            f'<span style="color:{MUTED}">prompts {start + 1}–{start + len(shown)} '
            f"of {len(self.items)}</span>"
        )
        if self.where.value != where:
            self.where.value = where
        self.previous.disabled = self.page == 0
        self.next.disabled = self.page >= pages - 1

    def turn(self, pages: int) -> None:
        """Show the page ``pages`` after (negative: before) the current one."""
        with self._lock:
            last = max(0, -(-len(self.items) // self.page_size) - 1)
            self.page = max(0, min(last, self.page + pages))
            self._draw_page()

    def _title_html(self) -> str:
        shown = len(self.items)
        if self.total == 0:
            count = "No open prompts."
        elif shown < self.total:
            count = f"{self.total} open prompts (the {shown} with the soonest deadlines shown)."
        else:
            count = f"{self.total} open prompt{'s' if self.total != 1 else ''}."
        lines = [
            f'<div style="font-weight:600">Inbox: {esc(count)}</div>',
            f'<div style="font-size:smaller;color:{MUTED}">From {esc(self.source.where())}.</div>',
        ]
        if self.lives_with_kernel:
            lines.append(
                f'<div style="font-size:smaller;color:{COLORS["warn"]}">This inbox '
                "lives only as long as this kernel: no Jupyter server keeps these "
                "prompts for it.</div>"
            )
        for problem in self.problems:
            lines.append(
                f'<div style="font-size:smaller;color:{COLORS["error"]}">{esc(problem)}</div>'
            )
        if self._stop_note:
            lines.append(
                f'<div style="font-size:smaller;color:{COLORS["warn"]}">No longer '
                f"updated: {esc(self._stop_note)}.</div>"
            )
        return "".join(lines)

    # --- opening and answering ------------------------------------------------------------

    def _find(self, which: str | int | InboxItem) -> InboxItem:
        if isinstance(which, InboxItem):
            return which
        items = list(self.items)
        if isinstance(which, int):
            return items[which]
        for item in items:
            if which in (item.key, item.prompt_id):
                return item
        raise KeyError(f"no open prompt {which!r} in this inbox")

    def open(self, which: str | int | InboxItem) -> Card:
        """Show the card of a prompt (by prompt id, key, position or item) below the list."""
        item = self._find(which)
        with self._lock:
            card = self.cards.get(item.key)
            if card is None:
                card = self._card(item)
                self.cards[item.key] = card
            self._selected = item.key
        close = W.Button(
            description="Close",
            tooltip="hide this card",
            layout=W.Layout(width="auto", align_self="flex-start"),
        )
        close.on_click(weakly(self, "_hide"))
        self.detail.children = [card.widget, close]
        return card

    def _hide(self) -> None:
        self._selected = None
        self.detail.children = []

    def _card(self, item: InboxItem) -> Card:
        if isinstance(self.source, GatewaySource):
            sender = GatewaySender(
                self.source.gateway,
                item.prompt_id,
                item.needed,
                registration=item.registration,
                host=HUB if self.source.info.on_hub else SERVER,
            )
            return GatewayCard(item, sender, self._loop.submit, weakly(self, "wake"))
        assert item.task is not None
        link: Link = self.source.links[item.agent_url]
        card = PromptCard(link, item.task, item.envelope, responder=self._responder)
        card.on_outcome(weakly(self, "wake"))
        return card

    def answer(
        self,
        which: str | int | InboxItem,
        payload: Mapping[str, Any],
        *,
        timeout: float | None = 60.0,
    ) -> Outcome:
        """Open a prompt's card and answer it from code, as a person would; the outcome."""
        card = self.open(which)
        if isinstance(card, GatewayCard):
            return card.answer(payload, timeout=timeout)
        return card.answer(payload, timeout=timeout)

    # --- life -----------------------------------------------------------------------------

    def stop_following(self, reason: str) -> None:
        """Stop looking for new prompts, saying why (the list stays as it was)."""
        with self._lock:
            if self._stop_note or self.closed:
                return
            self._stop_note = reason
        self._looking.stop()
        self.title.value = self._title_html()

    def close(self) -> None:
        """Stop looking, close the connections (idempotent)."""
        self.stop_following("the inbox was closed")
        with self._lock:
            if self.closed:
                return
            self.closed = True
        try:
            self._loop.run(self.source.aclose(), timeout=10)
        except (RuntimeError, TimeoutError):  # the loop is gone already
            pass
        if isinstance(self.source, AgentsSource):
            self.source.close_links()

    def __enter__(self) -> Inbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        looking = getattr(self, "_looking", None)
        if looking is not None:
            looking.stop()

    # --- display --------------------------------------------------------------------------

    def to_text(self) -> str:
        """The inbox as plain text (terminals, nbconvert, no widget front end)."""
        lines = [f"Inbox: {self.total} open prompt{'s' if self.total != 1 else ''}"]
        if self.lives_with_kernel:
            lines.append("  (asked by this kernel; it lives only as long as the kernel)")
        for item in self.items:
            extra = f", {deadline_text(item.envelope)}" if item.envelope.deadline else ""
            lines.append(f"- {item.envelope.prompt} (task {item.task_id}{extra})")
        lines += [f"  ! {p}" for p in self.problems]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Inbox: {self.total} open prompts>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle


async def _closed_elsewhere(card: PromptCard) -> None:
    """Tell an open card whose prompt left a kernel inbox what became of its task."""
    try:
        task = await card.link.client.get_task(card.task.id)
    except HitlError:
        return  # the card says what happens when someone answers it
    found = prompt_of(task)
    still = isinstance(found, PromptEvent) and found.prompt_id == card.prompt_id
    if task.status.state is not TaskState.INPUT_REQUIRED or not still:
        card.closed_by(task)
