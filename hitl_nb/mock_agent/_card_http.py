"""The mock agent's card endpoint, with the caching headers A2A 1.0 §8.6 asks for.

``GET /.well-known/agent-card.json`` answers with ``Cache-Control: max-age`` (§8.6.1,
SHOULD), an ``ETag`` (a digest of the card's text) and ``Last-Modified`` (when that
text was first served), and honours ``If-None-Match`` / ``If-Modified-Since`` with
``304 Not Modified`` (MAY). The card's URLs come from the request's host, so each host
has its own text; the times are kept for a bounded number of them.
"""

from __future__ import annotations

import json

from hitl_nb.a2a import CODEC_V1
from hitl_nb.mock_agent._card_cache import CARD_MAX_AGE, not_modified
from hitl_nb.mock_agent._http import BaseHandler

__all__ = ["AgentCardHandler"]


class AgentCardHandler(BaseHandler):
    """``GET /.well-known/agent-card.json``."""

    def get(self) -> None:
        """Serve the card, its URLs built from the request's host and the prefix."""
        base = f"{self.request.protocol}://{self.request.host}{self.service.prefix}"
        card = CODEC_V1.encode_agent_card(self.service.card(base))
        body = json.dumps(card).encode()
        etag, modified = self.service.card_stamps.stamp(base, body)
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
