"""An agent card's HTTP caching (hitl_nb.a2a._card_cache): its stamps and RFC 9110's rule
for a conditional request."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

from hitl_nb.a2a import CardStamps, not_modified


def test_card_stamps_are_bounded_and_the_rule_is_rfc_9110() -> None:
    stamps = CardStamps()
    for i in range(500):  # hostile Host headers
        stamps.stamp(f"http://h{i}", b"{}")
    assert len(stamps._seen) == 64
    etag, modified = stamps.stamp("http://x", b"{}")
    later = format_datetime(modified + timedelta(seconds=5), usegmt=True)
    earlier = format_datetime(modified - timedelta(seconds=5), usegmt=True)
    assert not_modified(None, later, etag, modified)
    assert not not_modified(None, earlier, etag, modified)
    assert not not_modified('"nope"', later, etag, modified)  # If-None-Match decides
    assert not_modified("*", None, etag, modified)
    assert not not_modified(None, None, etag, datetime.now(timezone.utc))


def test_a_new_text_is_stamped_anew_and_weak_etags_compare_weakly() -> None:
    stamps = CardStamps()
    etag, modified = stamps.stamp("http://x", b'{"a": 1}')
    assert stamps.stamp("http://x", b'{"a": 1}') == (etag, modified)
    other, _ = stamps.stamp("http://x", b'{"a": 2}')
    assert other != etag
    assert not_modified(f"W/{etag}", None, etag, modified)
    assert not_modified(etag, None, f"W/{etag}", modified)  # the SDK's ETags are weak
    assert not not_modified(None, "Tue, 32 Foo 2026 99:00:00 GMT", etag, modified)
    assert not not_modified("", "yesterday", etag, modified)  # If-None-Match decides
