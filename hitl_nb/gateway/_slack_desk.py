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
   Slack's own retry) is acknowledged and does nothing (:meth:`SlackRecords.first_sight`,
   in the database, so replicas agree);
4. then, after the acknowledgement: who clicked
   (:class:`~hitl_nb.notify._slack_people.SlackPeople`: a Slack user counts only once
   mapped to a user of the host) answers through
   :meth:`Gateway.answer` with that user as the :class:`Caller` (spec S-3: the
   gateway's own rules decide, and its claim forwards at most once); the audit entry's
   ``display`` names the Slack user beside the user (``bob (Slack U0123ABCD)``). Anyone
   refused (not mapped, not allowed, the prompt closed) is told so by an ephemeral
   message (``response_url``) only they see; nothing reaches the agent. The message in
   the channel is then brought up to date (:class:`~hitl_nb.gateway._slack_board.SlackBoard`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from hitl_nb._choices import one_choice
from hitl_nb._json import parse_json
from hitl_nb.errors import BadJSON, DeliveryFailed, NotifyRefused
from hitl_nb.gateway._gateway import Gateway, GatewayError
from hitl_nb.gateway._slack_board import SlackBoard
from hitl_nb.gateway._views import Caller
from hitl_nb.notify import (
    SLACK_OPEN_ACTION,
    Secret,
    SlackApi,
    SlackPeople,
    check_slack_signature,
    read_slack_action,
)

__all__ = ["MAX_INTERACTION_BYTES", "SlackDesk"]

log = logging.getLogger("hitl_nb.gateway")

#: The largest interaction request taken (Slack's are a few kilobytes).
MAX_INTERACTION_BYTES = 1024 * 1024
CANNOT = "You cannot answer this"
#: Seconds a signed request is accepted either side of our clock (Slack's five minutes).
SIGNED_WINDOW = 300.0


class SlackDesk:
    """Takes a Slack app's interaction requests (see the module docstring)."""

    def __init__(
        self,
        gateway: Gateway,
        api: SlackApi,
        secret: Secret,
        people: SlackPeople,
        board: SlackBoard,
        *,
        max_bytes: int = MAX_INTERACTION_BYTES,
    ) -> None:
        self.gateway = gateway
        self.api = api
        self.secret = secret
        self.people = people
        self.board = board
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
        if not await self.gateway.store.slack.first_sight(signature, now, 2 * SIGNED_WINDOW):
            log.info("hitl-nb slack: a request seen before was not taken again")
            return 200, None
        answer = choices[index].payload
        url = response_url if isinstance(response_url, str) else None
        self.gateway.background(self._answer(reg_id, prompt_id, slack_id, answer, url))
        return 200, None

    async def _answer(
        self,
        reg_id: str,
        prompt_id: str,
        slack_id: str,
        answer: dict[str, Any],
        response_url: str | None,
    ) -> None:
        name = await self.people.user_of(slack_id)
        if name is None:
            await self._tell(
                response_url,
                f"{CANNOT}: your Slack account is not linked to a user here. Ask an "
                "administrator, or answer on the answer page.",
            )
            return
        caller = Caller(name, f"{name} (Slack {slack_id})")
        try:
            reply = await self.gateway.answer(reg_id, prompt_id, caller, answer)
        except GatewayError as exc:
            lead = CANNOT if exc.status == 403 else "Your answer was not taken"
            await self._tell(response_url, f"{lead}: {exc.message}")
            self.board.wake()
            return
        except Exception:
            log.exception("hitl-nb slack: %s's answer failed", name)
            await self._tell(response_url, "Your answer could not be taken now; try again.")
            return
        self.board.wake()
        said = reply.body.get("message") if isinstance(reply.body, dict) else None
        if said:
            await self._tell(response_url, f"Thanks, {name}: {said}.")

    async def _tell(self, response_url: str | None, text: str) -> None:
        """An ephemeral message to the one who clicked."""
        if response_url is None:
            return
        body = {"response_type": "ephemeral", "replace_original": False, "text": text}
        try:
            await self.api.respond(response_url, body)
        except DeliveryFailed as exc:
            log.info("hitl-nb slack: could not tell the clicker: %s", exc)
