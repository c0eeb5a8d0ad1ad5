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

A flat form's "Answer" button opens its modal (``views.open`` with the click's
``trigger_id``: :func:`~hitl_nb.notify._slack_modal.modal_view`). Its submission
(``view_submission``) is read back into the payload exactly
(:func:`~hitl_nb.notify._slack_modal.read_modal`: a wrong-typed field is an error on
it, a field the form does not have 400), then checked at once as the one who clicked
(:meth:`Gateway.vet`: S-3 and the schema, a refusal audited); what is wrong is shown on
the modal's fields (``response_action: errors``); a good one is kept and answered as a
click is.
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
from hitl_nb.gateway._slack_clicks import CANNOT, SlackClerk
from hitl_nb.gateway._slack_store import SlackClick
from hitl_nb.gateway._views import Caller
from hitl_nb.notify import (
    MODAL_PREFIX,
    SLACK_OPEN_ACTION,
    ModalField,
    Secret,
    check_slack_signature,
    modal_fields,
    modal_view,
    read_modal,
    read_modal_action,
    read_modal_metadata,
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
        if not isinstance(payload, dict):
            return 400, {"error": "the interaction is not a JSON object"}
        kind = payload.get("type")
        if kind == "view_submission":
            return await self._submitted(payload, headers, now)
        if kind != "block_actions":
            return 400, {"error": "only block_actions and view_submission are taken here"}
        actions = payload.get("actions")
        action = actions[0] if isinstance(actions, list) and actions else None
        if not isinstance(action, dict):
            return 400, {"error": "the interaction names no action"}
        if action.get("action_id") == SLACK_OPEN_ACTION:
            return 200, None  # the "Answer" link opened the page: nothing to do here
        if str(action.get("action_id")).startswith(MODAL_PREFIX):
            return await self._open_modal(payload, action)
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
        slack_id = _slack_user(payload)
        if slack_id is None:
            return 400, {"error": "the interaction names no Slack user"}
        response_url = payload.get("response_url")
        click = SlackClick(
            headers.get("X-Slack-Signature") or "",
            now,
            slack_id,
            self.clerk.people.table.get(slack_id),
            reg_id,
            prompt_id,
            choices[index].payload,
            response_url if isinstance(response_url, str) else None,
        )
        return await self._take(click)

    async def _take(self, click: SlackClick) -> tuple[int, dict[str, Any] | None]:
        """Keep ``click`` with its request's mark (once), then answer it after."""
        slack = self.gateway.store.slack
        if not await slack.accept(click, self.gateway.replica, 2 * SIGNED_WINDOW):
            log.info("hitl-nb slack: a request seen before was not taken again")
            return 200, None
        self.clerk.take(click)
        return 200, None

    async def _open_modal(
        self, payload: dict[str, Any], action: dict[str, Any]
    ) -> tuple[int, dict[str, Any] | None]:
        """The "Answer" button of a flat form: its modal opened (``views.open``, with the
        click's ``trigger_id``, which Slack honours for three seconds)."""
        try:
            reg_id, prompt_id = read_modal_action(action)
        except NotifyRefused as exc:
            return 400, {"error": str(exc)}
        row = await self.gateway.store.prompt(reg_id, prompt_id)
        if row is None:
            return 404, {"error": "no such prompt at this gateway"}
        fields = modal_fields(row.envelope.get("response_schema"))
        if not fields:
            return 400, {"error": "the prompt has no form to answer in Slack"}
        trigger = payload.get("trigger_id")
        if not isinstance(trigger, str) or not trigger or len(trigger) > 256:
            return 400, {"error": "the interaction has no trigger_id"}
        url = payload.get("response_url")
        question = row.envelope.get("prompt")
        view = modal_view(
            reg_id,
            prompt_id,
            question if isinstance(question, str) else "",
            fields,
            url if isinstance(url, str) else None,
        )
        try:
            await self.clerk.api.call("views.open", {"trigger_id": trigger, "view": view})
        except DeliveryFailed as exc:
            log.info("hitl-nb slack: a modal not opened: %s", exc)
        return 200, None

    async def _submitted(
        self, payload: dict[str, Any], headers: Mapping[str, str], now: float
    ) -> tuple[int, dict[str, Any] | None]:
        """A modal sent: read exactly, checked by the gateway (S-3, the form) at once, its
        errors shown on the modal's fields; a good one kept and answered after."""
        view = payload.get("view")
        if not isinstance(view, dict):
            return 400, {"error": "the submission has no view"}
        try:
            reg_id, prompt_id, url = read_modal_metadata(view)
        except NotifyRefused as exc:
            return 400, {"error": str(exc)}
        row = await self.gateway.store.prompt(reg_id, prompt_id)
        if row is None:
            return 404, {"error": "no such prompt at this gateway"}
        fields = modal_fields(row.envelope.get("response_schema"))
        if not fields:
            return 400, {"error": "the prompt has no form to answer in Slack"}
        state = view.get("state")
        try:
            answer, errors = read_modal(
                fields, state.get("values") if isinstance(state, dict) else None
            )
        except NotifyRefused as exc:
            return 400, {"error": str(exc)}
        if errors:
            return 200, {"response_action": "errors", "errors": errors}
        slack_id = _slack_user(payload)
        if slack_id is None:
            return 400, {"error": "the interaction names no Slack user"}
        name = await self.clerk.people.user_of(slack_id)
        if name is None:
            words = f"{CANNOT}: your Slack account is not linked to a user here."
            return 200, {"response_action": "errors", "errors": {"f0": words}}
        caller = Caller(name, f"{name} (Slack {slack_id})")
        try:
            await self.gateway.vet(reg_id, prompt_id, caller, answer)
        except GatewayError as exc:
            return 200, {"response_action": "errors", "errors": _field_errors(exc, fields)}
        click = SlackClick(
            headers.get("X-Slack-Signature") or "",
            now,
            slack_id,
            name,
            reg_id,
            prompt_id,
            answer,
            url,
        )
        return await self._take(click)


def _slack_user(payload: Mapping[str, Any]) -> str | None:
    user = payload.get("user")
    slack_id = user.get("id") if isinstance(user, dict) else None
    if not isinstance(slack_id, str) or not slack_id or len(slack_id) > 64:
        return None
    return slack_id


def _field_errors(exc: GatewayError, fields: tuple[ModalField, ...]) -> dict[str, str]:
    """The gateway's refusal on the modal: a 422's each issue on its field's block (an
    issue of the whole form, and any other refusal, on the first)."""
    names = {f.name: f"f{i}" for i, f in enumerate(fields)}
    out: dict[str, str] = {}
    issues = exc.extra.get("validation_errors") if exc.status == 422 else None
    for issue in issues or []:
        path = str(issue.get("path") or "")
        head = path.split("/")[1] if path.startswith("/") else ""
        head = head.replace("~1", "/").replace("~0", "~")
        block = names.get(head, "f0")
        if block not in out:
            out[block] = str(issue.get("message") or "This does not fit.")[:300]
    if not out:
        lead = CANNOT if exc.status == 403 else "Not taken"
        out["f0"] = f"{lead}: {exc.message}"[:300]
    return out
