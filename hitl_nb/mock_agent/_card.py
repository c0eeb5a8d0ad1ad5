"""The mock agent's card: what it says, and its endpoint with the caching A2A 1.0 §8.6 asks for.

:func:`agent_card` is the card for a base URL: both interfaces (JSON-RPC at ``URL/``,
HTTP+JSON at ``URL``, protocol version 1.0), streaming, push notifications when on, the
extension (``required: false``), one skill per scenario.

``GET /.well-known/agent-card.json`` (:class:`AgentCardHandler`) answers with
``Cache-Control: max-age`` (§8.6.1, SHOULD), an ``ETag`` (a digest of the card's text)
and ``Last-Modified`` (when that text was first served), and honours ``If-None-Match`` /
``If-Modified-Since`` with ``304 Not Modified`` (MAY; the rule is RFC 9110 §13.1,
:func:`not_modified`). The card's URLs come from the request's host, so each host has its
own text; :class:`CardStamps` keeps their times for a bounded number of them.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

from hitl_nb.a2a import (
    CODEC_V1,
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
)
from hitl_nb.mock_agent._http import AgentService, BaseHandler
from hitl_nb.spec import agent_card_extension

__all__ = ["CARD_MAX_AGE", "AgentCardHandler", "CardStamps", "agent_card", "not_modified"]


def agent_card(service: AgentService, base_url: str) -> AgentCard:
    """The agent card for clients that reach the agent at ``base_url``."""
    ext = agent_card_extension()
    skills = [
        AgentSkill(
            s.name,
            s.name,
            f'{s.description} Start it with a data part {{"scenario": "{s.name}"}} '
            f'or the text "{s.name}" in the first message (default: approval).',
            tags=["hitl-prompt", "scenario"],
            examples=[s.name],
        )
        for s in service.core.scenarios
    ]
    return AgentCard(
        name=service.name,
        description=service.description,
        version=service.version,
        supported_interfaces=[
            AgentInterface(base_url + "/", "JSONRPC", "1.0"),
            AgentInterface(base_url, "HTTP+JSON", "1.0"),
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=service.core.push.enabled,
            extensions=[
                AgentExtension(ext["uri"], ext["description"], ext["required"], ext["params"])
            ],
        ),
        skills=skills,
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
    )


#: Seconds a client may reuse the card (it changes only when scenarios are registered).
CARD_MAX_AGE = 300
_HOSTS = 64


class CardStamps:
    """The ETag and Last-Modified of each card text served, per base URL (bounded)."""

    def __init__(self) -> None:
        self._seen: OrderedDict[str, tuple[str, datetime]] = OrderedDict()

    def stamp(self, base: str, body: bytes) -> tuple[str, datetime]:
        """``(etag, last_modified)`` for ``body`` served at ``base``."""
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        known = self._seen.get(base)
        if known is None or known[0] != etag:
            known = (etag, datetime.now(timezone.utc).replace(microsecond=0))
            self._seen[base] = known
        self._seen.move_to_end(base)
        while len(self._seen) > _HOSTS:  # hostile Host headers must not grow this
            self._seen.popitem(last=False)
        return known


def _etags(header: str) -> list[str]:
    return [tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()]


def not_modified(
    if_none_match: str | None, if_modified_since: str | None, etag: str, modified: datetime
) -> bool:
    """RFC 9110 §13.1: If-None-Match decides when present, else If-Modified-Since."""
    if if_none_match is not None:
        tags = _etags(if_none_match)
        return "*" in tags or etag in tags
    if if_modified_since:
        try:
            since = parsedate_to_datetime(if_modified_since)
        except (TypeError, ValueError, IndexError):
            return False  # an unreadable date is ignored (RFC 9110 §13.1.3)
        if since.tzinfo is None:
            since = since.replace(tzinfo=timezone.utc)
        return modified <= since
    return False


class AgentCardHandler(BaseHandler):
    """``GET /.well-known/agent-card.json``; ``stamps``: the route's :class:`CardStamps`."""

    def initialize(self, service: AgentService, stamps: CardStamps) -> None:  # type: ignore[override]
        """Tornado hook: receive the shared service and the card's stamps."""
        super().initialize(service)
        self.stamps = stamps

    def get(self) -> None:
        """Serve the card, its URLs built from the request's host and the prefix."""
        base = f"{self.request.protocol}://{self.request.host}{self.service.prefix}"
        card = CODEC_V1.encode_agent_card(agent_card(self.service, base))
        body = json.dumps(card).encode()
        etag, modified = self.stamps.stamp(base, body)
        self.set_header("Cache-Control", f"max-age={CARD_MAX_AGE}")
        self.set_header("ETag", etag)
        self.set_header("Last-Modified", modified)
        headers = self.request.headers
        if not_modified(
            headers.get("If-None-Match"), headers.get("If-Modified-Since"), etag, modified
        ):
            self.set_status(304)
            self.finish()
            return
        self.set_header("Content-Type", "application/json")
        self.finish(body)
