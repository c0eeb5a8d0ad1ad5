"""The agent's words made safe for each place a notification puts them (S-1)."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hitl_nb.notify._text import ZWSP, chat, clean, cut, defang, html, one_line

# What a hostile agent writes: mentions, links in every spelling, header breaks,
# controls, bidi overrides, lookalikes; mixed with ordinary text.
HOSTILE = [
    "<!channel>",
    "<!here|here>",
    "<!everyone>",
    "<@U024BE7LH>",
    "<#C024BE7LR|general>",
    "<!subteam^SAZ94GDB8>",
    "<https://evil.example|click here>",
    "<mailto:x@evil.example|mail>",
    "@here",
    "@channel",
    "@all",
    "@bob",
    "~town-square",
    "[click](https://evil.example)",
    "![img](http://tracker.example/p.png)",
    "[ref][1]\n[1]: https://evil.example",
    "https://evil.example/login",
    "http://127.0.0.1:8888/",
    "www.evil.example",
    "evil.example",
    "bob@evil.example",
    "\r\nBcc: victim@example.org",
    "\nSubject: hi",
    "\x00\x07\x1b[31m",
    "\u202egnp.exe",
    "\u2028\u2029\x85",
    "＠here",
    "ｈｔｔｐｓ：／／evil．example",
    "&lt;!channel&gt;",
    "\ud800",
]

text = st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(HOSTILE) | st.text(max_size=20), max_size=30).map("".join),
)
limits = st.integers(min_value=1, max_value=300)

# What a Slack or Mattermost client would turn into a mention or a link.
LIVE = [
    re.compile(r"[<>]"),  # <!channel>, <@U...>, <url|label>, <http://...>
    re.compile(r"@\w"),  # @here, @channel, @bob, bob@example.org
    re.compile(r"~\w"),  # ~channel (Mattermost)
    re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://"),  # scheme://...
    re.compile(r"\.\w"),  # example.org, www.example
    re.compile(r"\][(\[:]"),  # [label](url), [label][ref], [ref]: url
]


def assert_dead(out: str) -> None:
    for pattern in LIVE:
        assert not pattern.search(out), (pattern.pattern, out)


def assert_plain(out: str, *, newlines: bool) -> None:
    for ch in out:
        if ch == ZWSP:
            continue
        if ch == "\n":
            assert newlines, repr(out)
            continue
        assert unicodedata.category(ch) not in ("Cc", "Cf", "Cs"), (repr(ch), out)


@pytest.mark.property
@given(text, limits)
@settings(max_examples=300, deadline=None)
def test_clean_is_plain_text_within_the_limit(value, limit):
    out = clean(value, limit)
    assert len(out) <= limit
    assert_plain(out, newlines=True)
    assert "\n\n\n" not in out
    assert ZWSP not in out


@pytest.mark.property
@given(text, limits)
@settings(max_examples=300, deadline=None)
def test_one_line_holds_no_line_break_and_no_control(value, limit):
    out = one_line(value, limit)
    assert len(out) <= limit
    assert "\r" not in out and "\n" not in out
    assert_plain(out, newlines=False)
    assert out == out.strip()


@pytest.mark.property
@given(text, limits)
@settings(max_examples=400, deadline=None)
def test_chat_leaves_no_live_mention_or_link(value, limit):
    out = chat(value, limit)
    assert_dead(out)
    assert_plain(out, newlines=True)
    # every & is one of Slack's three escapes
    assert re.fullmatch(r"(?:[^&]|&amp;|&lt;|&gt;)*", out, re.S), out
    assert len(out) <= 5 * limit


@pytest.mark.property
@given(text, limits)
@settings(max_examples=300, deadline=None)
def test_html_is_escaped_and_dead(value, limit):
    out = html(value, limit)
    assert "<" not in out and ">" not in out and '"' not in out
    unescaped = out.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    for pattern in LIVE[1:]:
        assert not pattern.search(unescaped.replace("&quot;", '"').replace("&#x27;", "'"))


@pytest.mark.property
@given(st.text(max_size=200))
@settings(deadline=None)
def test_defang_reads_the_same_and_at_most_doubles(value):
    out = defang(value)
    assert out.replace(ZWSP, "") == value.replace(ZWSP, "")
    assert len(out) <= 2 * max(len(value), 1)


@pytest.mark.parametrize(
    ("given_text", "expected"),
    [
        pytest.param("<!channel> go", "&lt;!channel&gt; go", id="slack-mention"),
        pytest.param("@here now", f"@{ZWSP}here now", id="mattermost-mention"),
        pytest.param(
            "<https://evil.example|click>",
            f"&lt;https:{ZWSP}//evil.{ZWSP}example|click&gt;",
            id="slack-link",
        ),
        pytest.param(
            "[click](https://e.x)", f"[click]{ZWSP}(https:{ZWSP}//e.{ZWSP}x)", id="markdown-link"
        ),
        pytest.param("＠here", f"@{ZWSP}here", id="fullwidth-at"),
        pytest.param("a & b", "a &amp; b", id="ampersand"),
        pytest.param("v1.2 e.g. fine.", f"v1.{ZWSP}2 e.{ZWSP}g. fine.", id="dots-between-words"),
    ],
)
def test_chat_examples(given_text, expected):
    assert chat(given_text, 200) == expected


def test_clean_keeps_paragraphs_and_drops_what_hides():
    assert clean("a\r\nb\rc\u2028d", 50) == "a\nb\nc\nd"
    assert clean("one\n\n\n\n\ntwo", 50) == "one\n\ntwo"
    assert clean("\u202eevil\u200b\x00\x1b[31m", 50) == "evil[31m"
    assert clean("\ttabbed  ", 50) == "tabbed"


def test_cut_ends_with_an_ellipsis_within_the_limit():
    assert cut("abcdef", 6) == "abcdef"
    assert cut("abcdef", 4) == "abc…"
    assert cut("ab   cdef", 4) == "ab…"
    with pytest.raises(ValueError):
        cut("x", 0)


def test_one_line_makes_a_subject_of_a_header_injection():
    assert one_line("Hi\r\nBcc: victim@example.org\r\n\r\nbody", 200) == (
        "Hi Bcc: victim@example.org body"
    )
