"""A Slack app: messages posted with the bot token, with buttons to answer in Slack.

The channel kind ``slack-app``, a team channel given as ``{"kind": "slack-app",
"channel": "C0123ABCD"}`` (the bot must be in it), carried by :class:`SlackAppChannel`
over :class:`~hitl_nb.notify._slack_api.SlackApi` (``chat.postMessage``). The plain
incoming webhook (``_slack``) stays as it is.

A message is its text (:meth:`~hitl_nb.notify.Message.chat`: the agent's words
neutralised, spec S-1) and Block Kit blocks (:func:`slack_blocks`), each paragraph a
``mrkdwn`` section of that same neutralised text, then who may answer and by when,
then:

- for a one-choice prompt (:func:`hitl_nb._choices.one_choice`), one button per choice:
  its ``value`` names the prompt and the choice's index (:func:`action_value`), its
  ``action_id`` the index and a digest of the prompt, never the value itself (the
  interaction endpoint makes the answer again from the stored schema);
- for a flat form a modal holds (``facts.form``: :mod:`hitl_nb.notify._slack_modal`), an
  "Answer" button whose click opens the modal (its ``value`` names the prompt);
- otherwise an "Answer" button that opens the message's link (:mod:`hitl_nb.notify._links`).

A posted message's ``channel`` and ``ts`` are given to ``posted`` (the gateway keeps
them, to update the message with what became of the prompt).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import _text
from hitl_nb.notify._kind import ChannelKind
from hitl_nb.notify._messages import Message
from hitl_nb.notify._slack_api import SlackApi
from hitl_nb.notify._slack_modal import modal_action_id, modal_action_value

__all__ = [
    "ACTION_PREFIX",
    "KIND",
    "SLACK_OPEN_ACTION",
    "SlackAppChannel",
    "SlackAppTarget",
    "action_id",
    "action_value",
    "slack_blocks",
    "read_slack_action",
]

#: Every choice button's ``action_id`` starts so; the link button's is :data:`SLACK_OPEN_ACTION`.
ACTION_PREFIX = "hitl-choice:"
#: A button's label is at most this long (Slack's limit for a button's text).
LABEL_LIMIT = 75
SLACK_OPEN_ACTION = "hitl-open"
#: Slack's limits: a section's text, a button's value.
SECTION_LIMIT = 3000
VALUE_LIMIT = 2000
_CHANNEL = re.compile(r"[A-Z0-9][A-Z0-9_-]{1,79}")

#: ``posted(message, channel, ts)``: a message went; where it is.
Posted = Callable[[Message, str, str], Awaitable[None]]


@dataclass(frozen=True)
class SlackAppTarget:
    """A Slack channel (or conversation) id the app's bot posts to."""

    channel: str

    def __post_init__(self) -> None:
        if not isinstance(self.channel, str) or not _CHANNEL.fullmatch(self.channel):
            raise NotifyRefused(
                f"a Slack app's channel is a channel id like C0123ABCD, got {self.channel!r}"
            )


def _from_setting(spec: Mapping[str, Any]) -> SlackAppTarget:
    unknown = sorted(set(spec) - {"kind", "channel"})
    if unknown:
        raise NotifyRefused(f"unknown key(s) {', '.join(unknown)} (a Slack app takes 'channel')")
    return SlackAppTarget(spec.get("channel"))  # type: ignore[arg-type]


def _digest(reg_id: str, prompt_id: str) -> str:
    text = json.dumps([reg_id, prompt_id], ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(text).hexdigest()[:16]


def action_id(reg_id: str, prompt_id: str, index: int) -> str:
    """A choice button's ``action_id``: the index and a digest of the prompt."""
    return f"{ACTION_PREFIX}{index}:{_digest(reg_id, prompt_id)}"


def action_value(reg_id: str, prompt_id: str, index: int) -> str:
    """A choice button's ``value``: the prompt's ids and the choice's index."""
    return json.dumps(["v1", reg_id, prompt_id, index], ensure_ascii=False, separators=(",", ":"))


def read_slack_action(action: Mapping[str, Any]) -> tuple[str, str, int]:
    """(registration id, prompt id, choice index) of a clicked choice button;
    :class:`~hitl_nb.errors.NotifyRefused` for any action not ours or not whole."""
    ident, value = action.get("action_id"), action.get("value")
    if not isinstance(ident, str) or not ident.startswith(ACTION_PREFIX):
        raise NotifyRefused(f"unknown action {str(ident)[:80]!r}")
    try:
        tag, reg_id, prompt_id, index = json.loads(value) if isinstance(value, str) else [None] * 4
    except (ValueError, TypeError):
        raise NotifyRefused("the action's value is not one of ours") from None
    if (
        tag != "v1"
        or not isinstance(reg_id, str)
        or not isinstance(prompt_id, str)
        or isinstance(index, bool)
        or not isinstance(index, int)
        or ident != action_id(reg_id, prompt_id, index)
    ):
        raise NotifyRefused("the action's value is not one of ours")
    return reg_id, prompt_id, index


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": _text.cut(text, SECTION_LIMIT)}}


def _label(text: str) -> str:
    return _text.defang(_text.one_line(text, LABEL_LIMIT)) or "?"


def _who_may(message: Message) -> str | None:
    if len(message.items) != 1 or message.kind not in ("opened", "reminder"):
        return None
    f = message.items[0].facts
    if message.recipient.startswith("user:"):
        return "You may answer, here or on the answer page."
    if f.specific and message.recipient.startswith("team:"):
        return "Only the people the agent named may answer."
    return "Anyone on the team may answer, here or on the answer page."


def slack_blocks(message: Message) -> list[dict[str, Any]]:
    """The Block Kit blocks of ``message`` (see the module docstring; no I/O)."""
    out = []
    for paragraph in message.paragraphs:
        shown = dataclasses.replace(message, paragraphs=(paragraph,)).chat()
        if shown.strip() and not shown.rstrip().endswith(message.link):
            out.append(_section(shown))
    # who may answer; how many must agree and the deadline are paragraphs of the message
    who = _who_may(message)
    if who:
        out.append({"type": "context", "elements": [{"type": "mrkdwn", "text": who}]})
    facts = message.items[0].facts if len(message.items) == 1 else None
    buttons: list[dict[str, Any]] = []
    if facts is not None and facts.choices and message.kind in ("opened", "reminder"):
        values = [action_value(facts.reg_id, facts.prompt_id, i) for i in range(len(facts.choices))]
        if all(len(v) <= VALUE_LIMIT for v in values):
            for i, label in enumerate(facts.choices):
                buttons.append(
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": _label(label), "emoji": False},
                        "action_id": action_id(facts.reg_id, facts.prompt_id, i),
                        "value": values[i],
                    }
                )
    if not buttons and facts is not None and facts.form and message.kind in ("opened", "reminder"):
        value = modal_action_value(facts.reg_id, facts.prompt_id)
        if len(value) <= VALUE_LIMIT:
            buttons.append(
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Answer"},
                    "style": "primary",
                    "action_id": modal_action_id(facts.reg_id, facts.prompt_id),
                    "value": value,
                }
            )
    if not buttons:
        title = "Answer" if message.kind in ("opened", "reminder") else "Open"
        buttons.append(
            {
                "type": "button",
                "text": {"type": "plain_text", "text": title},
                "action_id": SLACK_OPEN_ACTION,
                "url": message.link,
            }
        )
    out.append({"type": "actions", "block_id": "hitl-actions", "elements": buttons})
    return out


class SlackAppChannel:
    """Posts messages to :class:`SlackAppTarget` channels with ``chat.postMessage``
    (the transport ``slack-app``); ``posted`` learns where each went."""

    def __init__(self, api: SlackApi, posted: Posted | None = None) -> None:
        self.api = api
        self.posted = posted

    def request_for(self, message: Message, target: SlackAppTarget) -> dict[str, Any]:
        """The ``chat.postMessage`` body for ``message`` (no I/O)."""
        return {
            "channel": target.channel,
            "text": message.chat(),
            "blocks": slack_blocks(message),
            "unfurl_links": False,
            "unfurl_media": False,
        }

    async def deliver(self, message: Message, target: SlackAppTarget) -> None:
        """Post ``message``; :class:`~hitl_nb.errors.DeliveryFailed` when Slack did not
        take it (retried by the outbox unless for good)."""
        body = self.request_for(message, target)
        answer = await self.api.call("chat.postMessage", body)
        channel, ts = answer.get("channel"), answer.get("ts")
        if self.posted is not None and isinstance(channel, str) and isinstance(ts, str):
            await self.posted(message, channel, ts)

    async def aclose(self) -> None:
        """Close the API's client."""
        await self.api.aclose()


KIND = ChannelKind(
    "slack-app",
    SlackAppTarget,
    "a Slack app's channel",
    transport="slack-app",
    from_setting=_from_setting,
    unavailable="the Slack app is not set up (no bot token: notify_slack_token_env or _file)",
)
