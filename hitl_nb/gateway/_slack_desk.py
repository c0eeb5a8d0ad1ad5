"""A Slack app's interactions: a button clicked in Slack, taken as an answer like the page's.

``POST {prefix}slack/interactions`` (:mod:`hitl_nb.gateway._slack_http`) hands each
request to :meth:`SlackDesk.receive`, which answers at once (Slack waits three seconds)
and does the answer after it:

1. Slack's signature is checked (v0, HMAC-SHA256 with the signing secret, a timestamp
   at most five minutes from ours, compared in constant time:
   :func:`~hitl_nb.notify._slack_api.check_slack_signature`); a request that fails is 401;
2. the body is Slack's form (``payload=`` and a JSON document); a button of ours names
   a prompt the gateway knows and a choice its schema has
   (:func:`~hitl_nb.notify._slack_app.read_slack_action`), else 400 or 404: nothing forwarded;
3. a request seen before (the same signature, within the five minutes: a replay, or
   Slack's own retry) is acknowledged and does nothing; a request seen first is kept as
   a click in the same transaction (:meth:`SlackRecords.accept`, in the database, so
   replicas agree and a process killed after the acknowledgement loses nothing);
4. then, after the acknowledgement, the click is answered
   (:class:`~hitl_nb.gateway._slack_clicks.SlackClerk`: who clicked, as which user,
   through :meth:`Gateway.answer` and its S-3 rules; refusals ephemeral; the message
   brought up to date).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from hitl_nb._choices import one_choice
from hitl_nb._json import parse_json
from hitl_nb.errors import BadJSON, NotifyRefused
from hitl_nb.gateway._gateway import Gateway
from hitl_nb.gateway._slack_clicks import SlackClerk
from hitl_nb.gateway._slack_store import SlackClick
from hitl_nb.notify import (
    SLACK_OPEN_ACTION,
    Secret,
    check_slack_signature,
    read_slack_action,
)

__all__ = ["MAX_INTERACTION_BYTES", "SlackDesk"]

log = logging.getLogger("hitl_nb.gateway")

#: The largest interaction request taken (Slack's are a few kilobytes).
MAX_INTERACTION_BYTES = 1024 * 1024
#: Seconds a signed request is accepted either side of our clock (Slack's five minutes).
SIGNED_WINDOW = 300.0


class SlackDesk:
    """Takes a Slack app's interaction requests (see the module docstring)."""

    def __init__(
        self,
        gateway: Gateway,
        secret: Secret,
        clerk: SlackClerk,
        *,
        max_bytes: int = MAX_INTERACTION_BYTES,
    ) -> None:
        self.gateway = gateway
        self.secret = secret
        self.clerk = clerk
        self.max_bytes = max_bytes

    async def receive(
        self, headers: Mapping[str, str], body: bytes, now: float | None = None
    ) -> tuple[int, dict[str, Any] | None]:
        """The status and JSON body (None: empty) to answer one request with; an
        answer to take is started in the background before this returns."""
        now = time.time() if now is None else now
        try:
            secret = self.secret.read()
        except NotifyRefused as exc:
            log.error("hitl-nb slack: the signing secret cannot be read: %s", exc)
            return 503, {"error": "the signing secret is not available here"}
        wrong = check_slack_signature(secret, headers, body, now)
        if wrong is not None:
            log.warning("hitl-nb slack: a request refused: %s", wrong)
            return 401, {"error": wrong}
        try:
            form = parse_qs(body.decode("utf-8"), strict_parsing=True, max_num_fields=10)
            (text,) = form["payload"]
            payload = parse_json(text)
        except (UnicodeDecodeError, ValueError, KeyError, BadJSON) as exc:
            return 400, {"error": f"not Slack's interaction form (payload=JSON): {exc}"[:300]}
        if not isinstance(payload, dict) or payload.get("type") != "block_actions":
            return 400, {"error": "only block_actions interactions are taken here"}
        actions = payload.get("actions")
        action = actions[0] if isinstance(actions, list) and actions else None
        if not isinstance(action, dict):
            return 400, {"error": "the interaction names no action"}
        if action.get("action_id") == SLACK_OPEN_ACTION:
            return 200, None  # the "Answer" link opened the page: nothing to do here
        try:
            reg_id, prompt_id, index = read_slack_action(action)
        except NotifyRefused as exc:
            return 400, {"error": str(exc)}
        row = await self.gateway.store.prompt(reg_id, prompt_id)
        if row is None:
            return 404, {"error": "no such prompt at this gateway"}
        choices = one_choice(row.envelope.get("response_schema"))
        if not 0 <= index < len(choices):
            return 400, {"error": "the prompt has no such choice"}
        user = payload.get("user")
        slack_id = user.get("id") if isinstance(user, dict) else None
        if not isinstance(slack_id, str) or not slack_id or len(slack_id) > 64:
            return 400, {"error": "the interaction names no Slack user"}
        response_url = payload.get("response_url")
        signature = headers.get("X-Slack-Signature") or ""
        click = SlackClick(
            signature,
            now,
            slack_id,
            self.clerk.people.table.get(slack_id),
            reg_id,
            prompt_id,
            choices[index].payload,
            response_url if isinstance(response_url, str) else None,
        )
        if not await self.gateway.store.slack.accept(
            click, self.gateway.replica, 2 * SIGNED_WINDOW
        ):
            log.info("hitl-nb slack: a request seen before was not taken again")
            return 200, None
        self.clerk.take(click)
        return 200, None
