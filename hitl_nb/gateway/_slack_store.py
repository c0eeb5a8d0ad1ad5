"""What a Slack app needs kept in the gateway's database (the tables of its schema step).

- ``slack_posts``: each message the app posted about a prompt (its ``channel`` and
  ``ts``, which ``chat.update`` needs; the blocks it was posted with; what it shows
  now), so any replica can update it when the prompt's state changes;
- ``slack_seen``: the signatures of the interaction requests taken in the last five
  minutes (the window in which a signed request is accepted at all): a request replayed
  within it is taken once, whichever replica it reaches.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hitl_nb.gateway._sql import Database

__all__ = ["SLACK_TABLES", "SlackPost", "SlackRecords"]

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
