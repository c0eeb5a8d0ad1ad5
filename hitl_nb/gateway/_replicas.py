"""What one gateway process does so that several on one database act as one gateway.

Every ``lease_seconds / 3`` seconds a replica runs one round (:meth:`Duties.round`):

1. **Heartbeat and leases** (:meth:`~hitl_nb.gateway.GatewayStore.hold_leases`, on a
   connection of its own where the database has a pool, and timed from the previous
   round's start, so requests that keep the database busy do not make it late): it
   renews its leases on registered tasks, takes free or expired ones up to its fair
   share and gives back the rest; it watches exactly the tasks it holds (a watcher
   starts for a new lease, stops for a lost one). A replica that dies stops renewing;
   after ``lease_seconds`` its leases count as expired and the others take them at
   their next round: a task is watched again within ``lease_seconds * 4 / 3``.
2. **Forwards left in doubt** (:meth:`~hitl_nb.gateway.GatewayStore.adopt_forwards`):
   the ``forwarding`` rows of replicas whose heartbeat stopped become this replica's,
   one adopter each (a compare-and-set in the database), and it settles them: it asks
   the agent whether the message landed before sending the same message again
   (:func:`hitl_nb.gateway._forward.settle`). Its own rows that nobody is working on
   (a settle that gave up while the agent was unreachable) are tried again too.
3. **Other work left by a replica that stopped**: each hook given to :meth:`Duties.also`
   runs (a Slack app's clicks taken but not answered, adopted as the forwards are).
4. **Deadlines** (:meth:`~hitl_nb.gateway.GatewayStore.due_prompts`): every open
   prompt whose deadline falls before the next rounds gets a timer here, whether or
   not this replica saw the prompt arrive; whichever replica's timer fires first
   closes it (the store admits one close), and every replica refuses a late answer
   from the stored deadline. The actions of registrations' deadline policies due
   before the next rounds are timed too, and those another replica claimed but did not
   finish (it died) are adopted (``actions``:
   :meth:`hitl_nb.gateway._deadline_desk.DeadlineDesk.round`).

When the database cannot be reached a round is skipped; once no round has succeeded
for ``lease_seconds`` the replica stops watching (its leases may be someone else's
now) until a round succeeds again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from hitl_nb._stopping import stop_tasks
from hitl_nb.gateway._store import Forward, GatewayStore, PromptRow, StoreUnavailable

__all__ = ["Duties"]

log = logging.getLogger("hitl_nb.gateway")


class Duties:
    """One replica's rounds (see the module docstring). ``watch`` / ``unwatch`` start
    and stop a registration's watcher (None: this gateway does not watch), ``settle``
    takes over a forward in doubt, ``arm`` times a deadline, ``actions`` times and
    adopts deadline policies' actions (given the round's horizon)."""

    def __init__(
        self,
        store: GatewayStore,
        replica: str,
        lease_seconds: float,
        *,
        watch: Callable[[str], Awaitable[None]] | None,
        unwatch: Callable[[str], None],
        settle: Callable[[Forward], None],
        arm: Callable[[PromptRow], None],
        actions: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.replica = replica
        self.lease_seconds = lease_seconds
        self.interval = lease_seconds / 3
        self._watch = watch
        self._unwatch = unwatch
        self._settle = settle
        self._arm = arm
        self._actions = actions
        #: Registrations this replica holds (and watches).
        self.held: set[str] = set()
        self._last_ok = time.monotonic()
        self._loop_task: asyncio.Task[None] | None = None
        self._also: list[Callable[[], Awaitable[None]]] = []

    def also(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run ``hook`` in each round, after the forwards in doubt (work a replica that
        stopped left undone, for this one to adopt)."""
        self._also.append(hook)

    async def start(self) -> None:
        """Run the first round now (raises when the database cannot be reached), then
        one every ``lease_seconds / 3`` seconds."""
        await self.round()
        self._loop_task = asyncio.ensure_future(self._loop())

    async def stop(self) -> None:
        """Stop the rounds and give back this replica's leases (others take them at
        once instead of after ``lease_seconds``)."""
        task, self._loop_task = self._loop_task, None
        if task is not None:
            await stop_tasks([task], what="a gateway replica's rounds")
        try:
            await self.store.leave(self.replica)
        except StoreUnavailable as exc:
            log.warning("hitl-nb gateway: could not give back leases: %s", exc)

    async def _loop(self) -> None:
        me = asyncio.current_task()
        # Until stop(): it ends the rounds at the next turn even when their cancellation
        # was lost in a database call (hitl_nb._stopping says how).
        began = time.monotonic()
        while self._loop_task is me:
            # Timed from the last round's start, so a slow round (its other calls wait
            # for the pool while requests keep it busy) does not delay the heartbeat.
            await asyncio.sleep(max(0.0, began + self.interval - time.monotonic()))
            began = time.monotonic()
            try:
                await self.round()
            except StoreUnavailable as exc:
                log.warning("hitl-nb gateway: %s; trying again in %.0f s", exc, self.interval)
                self._lost_touch()
            except Exception:  # a round must never end the rounds
                log.exception("hitl-nb gateway: a replica round failed")

    def _lost_touch(self) -> None:
        if time.monotonic() - self._last_ok > self.lease_seconds and self.held:
            log.warning("hitl-nb gateway: leases not renewed in time; not watching until they are")
            for reg_id in self.held:
                self._unwatch(reg_id)
            self.held = set()

    async def round(self) -> None:
        """Heartbeat and leases, forwards left in doubt, other work adopted, deadlines (once)."""
        held = await self.store.hold_leases(self.replica, self.lease_seconds)
        self._last_ok = time.monotonic()
        for reg_id in self.held - held:
            self._unwatch(reg_id)
        if self._watch is not None:
            for reg_id in sorted(held):
                await self._watch(reg_id)  # a no-op for a watcher that runs
        self.held = held
        for fwd in await self.store.adopt_forwards(self.replica):
            self._settle(fwd)
        horizon = time.time() + 2 * self.interval
        for hook in self._also:
            await hook()
        for row in await self.store.due_prompts(horizon):
            self._arm(row)
        if self._actions is not None:
            await self._actions(horizon)

    def lease_taken(self, reg_id: str) -> None:
        """This replica took the lease of a task it just registered."""
        self.held = self.held | {reg_id}
