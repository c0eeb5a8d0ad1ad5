"""The prompts panel (hitl-nb's JupyterLab extension) as a person sees it, for browser
tests, benchmarks and screenshots: its notifications, rows and card; and prompts put in
a gateway's store directly (a hostile agent's thousands, without asking it for each)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import uuid
from collections.abc import Coroutine
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import httpx

from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import Registration
from tests.helpers.until import until

T = TypeVar("T")

#: JavaScript: the texts of the notifications on screen (JupyterLab's toasts).
TOASTS = "() => [...document.querySelectorAll('.Toastify__toast')].map(t => t.innerText)"
#: JavaScript: the panel's list has been read (its banner says where it stands).
READY = "() => document.querySelector('.hitl-lab-banner')?.dataset.state === 'ok'"
#: JavaScript: the texts of the panel's rows drawn now, top first.
ROWS = """() => [...document.querySelectorAll('.hitl-lab-row')]
  .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
  .map(r => r.innerText)"""
#: The schema of the prompts put in a store directly.
APPROVE = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve"}},
    "required": ["approve"],
}


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end on a thread of its own: while Playwright's sync API runs
    in this thread, ``asyncio.run`` refuses to here."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def toasts(page: Any) -> list[str]:
    """The notifications on screen, as text."""
    found: list[str] = page.evaluate(TOASTS)
    return found


def wait_ready(page: Any, timeout: float = 60_000) -> None:
    """Until the page's panel has read the list of prompts."""
    page.wait_for_function(READY, timeout=timeout)


def command(page: Any, name: str, args: dict[str, Any] | None = None) -> None:
    """Run a JupyterLab command in the page (not waiting for what it returns)."""
    page.evaluate(
        "([name, args]) => { void window.jupyterapp.commands.execute(name, args); }",
        [name, args or {}],
    )


def open_file(page: Any, path: str) -> None:
    """Open ``path`` and wait until it is the main area's current widget."""
    command(page, "docmanager:open", {"path": path})
    page.wait_for_function(
        "(p) => window.jupyterapp.shell.currentWidget?.context?.path === p", arg=path
    )


def open_panel(page: Any) -> Any:
    """Show the prompts panel; its locator."""
    command(page, "hitl-nb:open-prompts")
    panel = page.locator(".hitl-lab-panel")
    panel.wait_for(timeout=30_000)
    return panel


def soonest(item: dict[str, Any]) -> tuple[bool, float, float, str]:
    """The panel's order of its rows: soonest deadline first, then the longest waiting."""
    at = item["deadline_at"]
    return (at is None, at or 0.0, item["first_seen"], item["key"])


def scroll_to(page: Any, base: str, token: str, question: str) -> Any:
    """Scroll the panel's list to the prompt whose question starts with ``question``
    (its place in the server's list, in the panel's order); its row, once drawn."""
    order = _listing(base, token)
    index = next(i for i, item in enumerate(order) if item["prompt"].startswith(question))
    _scroll(page, index)
    row = page.locator(".hitl-lab-row").filter(
        has=page.locator(".hitl-lab-question", has_text=question)
    )
    row.first.wait_for(timeout=30_000)
    return row.first


def row_of(page: Any, base: str, token: str, key: str) -> Any:
    """The panel's row of the prompt ``key`` ("<registration>/<prompt_id>"), scrolled to
    and drawn; waits until the server lists it."""
    order = until(
        lambda: _keyed(_listing(base, token), key), 60, f"the server lists {key}", interval=0.5
    )
    _scroll(page, next(i for i, item in enumerate(order) if item["key"] == key))
    row = page.locator(f'.hitl-lab-row[data-key="{key}"]')
    row.wait_for(timeout=60_000)
    return row


def _keyed(order: list[dict[str, Any]], key: str) -> list[dict[str, Any]] | None:
    return order if any(item["key"] == key for item in order) else None


def _listing(base: str, token: str) -> list[dict[str, Any]]:
    """The server's list of this user's open prompts, in the panel's order."""
    listing = httpx.get(
        base.rstrip("/") + "/hitl/lab/prompts",
        headers={"Authorization": f"token {token}"},
        timeout=60,
    ).json()["items"]
    return sorted(listing, key=soonest)


def _scroll(page: Any, index: int) -> None:
    page.wait_for_function("() => document.querySelector('.hitl-lab-row') !== null", timeout=60_000)
    page.locator(".hitl-lab-list").evaluate(
        "(l, i) => { const row = l.querySelector('.hitl-lab-row');"
        " l.scrollTop = i * parseFloat(row.style.height); }",
        index,
    )


def register(base: str, token: str, agent_url: str, task_id: str) -> dict[str, Any]:
    """Register a task with the server's gateway (as a kernel of it would)."""
    r = httpx.post(
        base.rstrip("/") + "/hitl/api/tasks",
        json={"agent_url": agent_url, "task_id": task_id},
        headers={"Authorization": f"token {token}"},
        timeout=60,
    )
    assert r.status_code in (200, 201), r.text
    body: dict[str, Any] = r.json()
    return body


def seed_prompts(
    state_dir: Path,
    count: int,
    *,
    agent_url: str = "http://agent.invalid:9/",
    text: str = "Approve change {n}?",
    deadline_in: float | None = 3600.0,
) -> str:
    """Put ``count`` open prompts of one hostile agent straight into the gateway's store
    (one task each, deadlines a second apart); the registrations' common prefix. The
    server reads them at its panel feed's next look (at most its lease period)."""
    prefix = uuid.uuid4().hex[:8]

    async def seed() -> None:
        store = SQLiteStore(state_dir / "gateway.sqlite")
        await store.open()
        now = time.time()
        try:
            for n in range(count):
                reg = Registration(f"{prefix}{n:06d}", agent_url, f"task-{n}", "agent", now)
                await store.add_registration(reg)
                deadline = None if deadline_in is None else now + deadline_in + n
                envelope: dict[str, Any] = {
                    "prompt_id": str(uuid.uuid4()),
                    "prompt": text.format(n=n),
                    "response_schema": APPROVE,
                    "allowed_responders": ["any"],
                }
                if deadline is not None:
                    at = datetime.fromtimestamp(deadline, timezone.utc)
                    envelope["deadline"] = at.isoformat().replace("+00:00", "Z")
                await store.see_prompt(reg.id, envelope["prompt_id"], None, envelope, deadline)
        finally:
            await store.close()

    run(seed())
    return prefix
