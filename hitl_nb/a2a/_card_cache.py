"""An agent card's HTTP caching (A2A 1.0 §8.6): when its text changed, and whether a
conditional request may be answered ``304 Not Modified``.

``Cache-Control: max-age`` is a SHOULD of §8.6.1 (:data:`CARD_MAX_AGE`), ``ETag`` and
``Last-Modified`` let a client check its copy, and a server MAY answer a request whose
copy is current with 304. :class:`CardStamps` gives each card text served the time it
was first served (its ``Last-Modified``), per base URL, for a bounded number of them (a
card's URLs come from the request's host, so each host has its own text);
:func:`not_modified` is RFC 9110 §13.1's rule. The mock agent's card endpoint and
``hitl_nb.agent``'s middleware both serve cards with them.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

__all__ = ["CARD_MAX_AGE", "CardStamps", "not_modified"]

#: Seconds a client may reuse a card (a card changes when its agent is deployed again).
CARD_MAX_AGE = 300
_HOSTS = 64


class CardStamps:
    """The ETag and Last-Modified of each card text served, per base URL (bounded)."""

    def __init__(self) -> None:
        self._seen: OrderedDict[str, tuple[str, datetime]] = OrderedDict()

    def stamp(self, base: str, body: bytes) -> tuple[str, datetime]:
        """``(etag, last_modified)`` for ``body`` served at ``base``: a digest of the
        text, and when this text was first served there (to the second)."""
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
    """RFC 9110 §13.1: If-None-Match decides when present (compared weakly), else
    If-Modified-Since; an unreadable date is ignored."""
    if if_none_match is not None:
        tags = _etags(if_none_match)
        return "*" in tags or etag.removeprefix("W/") in tags
    if if_modified_since:
        try:
            since = parsedate_to_datetime(if_modified_since)
        except (TypeError, ValueError, IndexError):
            return False  # an unreadable date is ignored (RFC 9110 §13.1.3)
        if since.tzinfo is None:
            since = since.replace(tzinfo=timezone.utc)
        return modified <= since
    return False
