"""The mock agent's card: what it says, and its endpoint with the caching A2A 1.0 §8.6 asks for.

:func:`agent_card` is the card for a base URL: both interfaces (JSON-RPC at ``URL/``,
HTTP+JSON at ``URL``, protocol version 1.0), streaming, push notifications when on, the
extension (``required: false``), one skill per scenario.

``GET /.well-known/agent-card.json`` (:class:`AgentCardHandler`) answers with
``Cache-Control: max-age`` (§8.6.1, SHOULD), an ``ETag`` (a digest of the card's text)
and ``Last-Modified`` (when that text was first served), and honours ``If-None-Match`` /
``If-Modified-Since`` with ``304 Not Modified`` (MAY), with
:class:`~hitl_nb.a2a.CardStamps` and :func:`~hitl_nb.a2a.not_modified`.
"""

from __future__ import annotations

import json

from hitl_nb.a2a import (
    CARD_MAX_AGE,
    CODEC_V1,
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    CardStamps,
    not_modified,
)
from hitl_nb.mock_agent._http import AgentService, BaseHandler
from hitl_nb.spec import agent_card_extension

__all__ = ["AgentCardHandler", "agent_card"]


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
