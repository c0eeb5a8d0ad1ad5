"""What a Slack app needs kept in the gateway's database (the tables of its schema step).

- ``slack_posts``: each message the app posted about a prompt (its ``channel`` and
  ``ts``, which ``chat.update`` needs; the blocks it was posted with; what it shows
  now), so any replica can update it when the prompt's state changes;
- ``slack_seen``: the signatures of the interaction requests taken in the last five
  minutes (the window in which a signed request is accepted at all): a request replayed
  within it is taken once, whichever replica it reaches;
- ``slack_clicks``: each click taken, written in the transaction that marks its request
  seen, before Slack is answered (who clicked, whom that is here when the table says so
  at once, the prompt, the answer, the ``response_url``), its ``owner`` the replica that
  answers it; ``done`` once answered (or refused). A click whose replica died before
  answering is adopted by a live one (as a forward in doubt is), so a click Slack was
  told was taken is answered, once, even after a ``kill -9``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hitl_nb.gateway._sql import Database, Session

__all__ = ["SLACK_CLICKS", "SLACK_TABLES", "SlackClick", "SlackPost", "SlackRecords"]

#: The schema step that adds these tables (:mod:`hitl_nb.gateway._schema`).
SLACK_TABLES = """
CREATE TABLE slack_posts (
    channel text NOT NULL,
    ts text NOT NULL,
    reg_id {id} NOT NULL,
    prompt_id {id} NOT NULL,
    blocks text NOT NULL,
    text text NOT NULL,
    shown text NOT NULL DEFAULT '',
    done integer NOT NULL DEFAULT 0,
    posted double precision NOT NULL,
    PRIMARY KEY (channel, ts)
);
CREATE INDEX slack_posts_prompt ON slack_posts (reg_id, prompt_id);
CREATE INDEX slack_posts_live ON slack_posts (posted) WHERE done = 0;
CREATE TABLE slack_seen (
    signature text PRIMARY KEY,
    at double precision NOT NULL
)
"""

#: The schema step that keeps the clicks taken until they are answered.
SLACK_CLICKS = """
CREATE TABLE slack_clicks (
    signature text PRIMARY KEY,
    at double precision NOT NULL,
    slack_user text NOT NULL,
    name text,
    reg_id {id} NOT NULL,
    prompt_id {id} NOT NULL,
    payload text NOT NULL,
    response_url text,
    owner text NOT NULL,
    done integer NOT NULL DEFAULT 0
);
CREATE INDEX slack_clicks_pending ON slack_clicks (owner) WHERE done = 0
"""

_POST = "channel, ts, reg_id, prompt_id, blocks, text, shown, done"


@dataclass(frozen=True)
class SlackPost:
    """A message the app posted about a prompt: where it is, what it was posted with
    (``blocks``, ``text``), what it shows now (``shown``: a status's words; ``done``: its
    prompt closed and the message says so, its buttons gone)."""

    channel: str
    ts: str
    reg_id: str
    prompt_id: str
    blocks: list[dict[str, Any]]
    text: str
    shown: str
    done: bool


@dataclass(frozen=True)
class SlackClick:
    """A click taken (its request's ``signature`` names it): ``slack_user`` clicked,
    ``name`` is whom that is here when known at once (the table; None: asked when
    answered), ``payload`` the answer for the prompt, made from the stored schema."""

    signature: str
    at: float
    slack_user: str
    name: str | None
    reg_id: str
    prompt_id: str
    payload: dict[str, Any]
    response_url: str | None


_CLICK = "signature, at, slack_user, name, reg_id, prompt_id, payload, response_url"


def _click(row: Sequence[Any]) -> SlackClick:
    return SlackClick(row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6]), row[7])


def _post(row: Sequence[Any]) -> SlackPost:
    return SlackPost(
        row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], row[6], bool(row[7])
    )


class SlackRecords:
    """The Slack app's rows on the gateway's database (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(
        self,
        post: SlackPost,
        at: float,
    ) -> None:
        """Keep a posted message (posted again: kept once)."""
        await self._db.count(
            f"INSERT INTO slack_posts ({_POST}, posted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (
                post.channel,
                post.ts,
                post.reg_id,
                post.prompt_id,
                json.dumps(post.blocks, ensure_ascii=False),
                post.text,
                post.shown,
                int(post.done),
                at,
            ),
        )

    async def live(self, limit: int = 200) -> list[SlackPost]:
        """The messages whose prompt's end they do not show yet (oldest first)."""
        rows = await self._db.rows(
            f"SELECT {_POST} FROM slack_posts WHERE done = 0 ORDER BY posted LIMIT ?", (limit,)
        )
        return [_post(r) for r in rows]

    async def of_prompt(self, reg_id: str, prompt_id: str) -> list[SlackPost]:
        """The messages about one prompt."""
        rows = await self._db.rows(
            f"SELECT {_POST} FROM slack_posts WHERE reg_id = ? AND prompt_id = ?",
            (reg_id, prompt_id),
        )
        return [_post(r) for r in rows]

    async def show(self, post: SlackPost, shown: str, done: bool) -> bool:
        """Mark ``post`` as showing ``shown`` if it still shows what it showed when
        read (False: another replica changed it first, or nothing changes)."""
        if shown == post.shown and done == post.done:
            return False
        changed = await self._db.count(
            "UPDATE slack_posts SET shown = ?, done = ? WHERE channel = ? AND ts = ? "
            "AND shown = ? AND done = ?",
            (shown, int(done), post.channel, post.ts, post.shown, int(post.done)),
        )
        return changed == 1

    async def first_sight(self, signature: str, at: float, window: float) -> bool:
        """True the first time ``signature`` is seen in ``window`` seconds (the ones
        older than that are forgotten)."""
        await self._db.count("DELETE FROM slack_seen WHERE at < ?", (at - window,))
        taken = await self._db.count(
            "INSERT INTO slack_seen (signature, at) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (signature, at),
        )
        return taken == 1

    async def accept(self, click: SlackClick, owner: str, window: float) -> bool:
        """In one transaction: mark ``click``'s request seen and keep the click, for
        replica ``owner`` to answer; False (nothing kept) when the request was seen in
        the last ``window`` seconds. Seen requests and answered clicks older than that
        are forgotten."""

        async def work(tx: Session) -> bool:
            await tx.count("DELETE FROM slack_seen WHERE at < ?", (click.at - window,))
            taken = await tx.count(
                "INSERT INTO slack_seen (signature, at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (click.signature, click.at),
            )
            if taken != 1:
                return False
            await tx.count(
                "DELETE FROM slack_clicks WHERE done = 1 AND at < ?", (click.at - window,)
            )
            await tx.count(
                f"INSERT INTO slack_clicks ({_CLICK}, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    click.signature,
                    click.at,
                    click.slack_user,
                    click.name,
                    click.reg_id,
                    click.prompt_id,
                    json.dumps(click.payload, ensure_ascii=False),
                    click.response_url,
                    owner,
                ),
            )
            return True

        return await self._db.atomic(work)

    async def adopt_clicks(self, replica: str) -> list[SlackClick]:
        """Take over the clicks not answered yet of replicas whose heartbeat stopped;
        every click ``replica`` now has to answer (oldest first)."""
        _, mine = await self._db.batch(
            [
                (
                    "UPDATE slack_clicks SET owner = ? WHERE done = 0 AND owner NOT IN "
                    "(SELECT id FROM replicas WHERE expires > {now})",
                    (replica,),
                ),
                (
                    f"SELECT {_CLICK} FROM slack_clicks WHERE done = 0 AND owner = ? ORDER BY at",
                    (replica,),
                ),
            ]
        )
        return [_click(r) for r in mine]

    async def click_done(self, signature: str) -> None:
        """The click was answered (or refused, and told so): not to be taken again."""
        await self._db.count("UPDATE slack_clicks SET done = 1 WHERE signature = ?", (signature,))

    async def pending_clicks(self) -> list[SlackClick]:
        """The clicks not answered yet, whoever's (oldest first)."""
        rows = await self._db.rows(f"SELECT {_CLICK} FROM slack_clicks WHERE done = 0 ORDER BY at")
        return [_click(r) for r in rows]
