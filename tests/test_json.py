import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb._json import dumps_compact, json_depth, lone_surrogate, parse_json
from hitl_nb.errors import BadJSON, HitlError

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4),
    max_leaves=20,
)


@pytest.mark.property
@given(json_values)
def test_round_trips_any_json(value):
    assert parse_json(dumps_compact(value)) == value
    assert parse_json(dumps_compact(value).encode()) == value


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param('{"a": 1, "a": 2}', "duplicate key 'a'", id="duplicate-key"),
        pytest.param('{"x": NaN}', "NaN", id="nan"),
        pytest.param("[Infinity]", "Infinity", id="infinity"),
        pytest.param("[-Infinity]", "-Infinity", id="minus-infinity"),
        pytest.param("{", "line 1 column 2", id="truncated"),
        pytest.param("", "empty", id="empty"),
        pytest.param("   ", "empty", id="blank"),
        pytest.param(b"\xff\xfe", "UTF-8", id="not-utf8"),
        pytest.param("[" * 100_000, "deeper than", id="deep-brackets"),
        pytest.param("[" * 40 + "]" * 40, "deeper than", id="over-max-depth"),
        # These two raised ValueError / returned inf (which JSON cannot carry) before.
        pytest.param("1" * 4301, "integer of 4301 digits", id="long-integer"),
        pytest.param('{"n": -1E+999}', "-1E.999 is out of the range", id="float-overflow"),
    ],
)
def test_refuses_with_a_clear_reason(text, words):
    with pytest.raises(BadJSON, match=words.replace("(", r"\(")) as info:
        parse_json(text, max_depth=32)
    assert isinstance(info.value, HitlError)


def test_size_cap_counts_bytes():
    with pytest.raises(BadJSON, match="over the limit of 10 bytes"):
        parse_json('"ééééé"', max_bytes=10)  # 7 characters, 12 bytes
    assert parse_json('"abc"', max_bytes=5) == "abc"


def test_ten_megabyte_string_is_refused_by_the_default_cap():
    with pytest.raises(BadJSON, match="over the limit"):
        parse_json('"' + "a" * 10_000_000 + '"')


def test_accepts_a_byte_order_mark():
    assert parse_json("\ufeff[1]") == [1]


def test_depth_counts_containers_only():
    assert json_depth(1, 10) == 0
    assert json_depth({}, 10) == 1
    assert json_depth({"a": [{"b": []}]}, 10) == 4
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    assert json_depth(deep, 32) == 33  # stops counting past the limit, no recursion


def test_the_depth_limit_holds_whether_brackets_are_nested_or_quoted():
    # Brackets in strings count for nothing but the shortcut (fewer brackets than the
    # limit: no walk); the walk still refuses what nests too deep.
    assert parse_json('["' + "[{" * 40 + '"]', max_depth=32) == ["[{" * 40]
    nested = "[" * 20 + '"' + "[" * 20 + '"' + "]" * 20
    assert json_depth(parse_json(nested, max_depth=32), 40) == 20
    with pytest.raises(BadJSON, match="deeper than 32"):
        parse_json("[" * 33 + "]" * 33, max_depth=32)


def test_dumps_compact_is_canonical_and_refuses_nan():
    assert dumps_compact({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    with pytest.raises(ValueError):
        dumps_compact(float("nan"))


def test_numbers_at_the_edges_are_read_exactly():
    assert parse_json("-" + "9" * 4300) == -int("9" * 4300)
    assert parse_json("[1.7976931348623157e308, 1e-400, -0.0]") == [1.7976931348623157e308, 0, 0]


# Lone UTF-16 surrogates: JSON escape text that is no Unicode character (RFC 7493 §2.1).
@pytest.mark.parametrize(
    ("text", "code", "where"),
    [
        pytest.param(r'{"a": "\ud800"}', r"\ud800", "line 1 column 8", id="value"),
        pytest.param(r'{"x\ud800": 1}', r"\ud800", "line 1 column 4", id="key"),
        pytest.param(r'{"a": "\uD800"}', r"\ud800", "line 1 column 8", id="value-upper-case"),
        pytest.param(r'{"\uDBFFx": 1}', r"\udbff", "line 1 column 3", id="key-upper-case"),
        pytest.param(r'["ok", {"a": [{"b": "x\udc00"}]}]', r"\udc00", "column 23", id="nested-low"),
        pytest.param('{\n  "a":\n  ["\\udfff"]}', r"\udfff", "line 3 column 5", id="line-3"),
        pytest.param(r'"\udc00\ud800"', r"\udc00", "column 2", id="pair-the-wrong-way-round"),
        pytest.param(r'"\ud800\ud800"', r"\ud800", "column 2", id="two-high-halves"),
        pytest.param(r'"\ud83d\ude00\ud83d"', r"\ud83d", "column 14", id="pair-then-lone"),
        pytest.param(r'"\\\ud800"', r"\ud800", "column 4", id="after-an-escaped-backslash"),
        pytest.param('"\ud800"', r"\ud800", "column 2", id="unescaped-in-a-str"),
    ],
)
def test_refuses_a_lone_surrogate_saying_where(text, code, where):
    with pytest.raises(BadJSON) as info:
        parse_json(text)
    message = str(info.value)
    assert f"lone UTF-16 surrogate ({code})" in message, message
    assert where in message and "not a Unicode character" in message, message
    if text.isascii():
        with pytest.raises(BadJSON, match="lone UTF-16 surrogate"):
            parse_json(text.encode())


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param(r'"\ud83d\ude00"', "\U0001f600", id="pair"),
        pytest.param(r'{"\uD83D\uDE00": "\uDBFF\uDFFF"}', {"\U0001f600": "\U0010ffff"}, id="upper"),
        pytest.param(r'"\\ud800"', "\\ud800", id="escaped-backslash"),
        pytest.param(r'"\\\\ud800"', "\\\\ud800", id="two-escaped-backslashes"),
        pytest.param(r'"\ud7ff\ue000"', "\ud7ff\ue000", id="either-side-of-the-range"),
        pytest.param('"ud800 \\u0064800"', "ud800 d800", id="look-alikes"),
    ],
)
def test_accepts_surrogate_pairs_and_look_alikes(text, value):
    assert parse_json(text) == value
    assert parse_json(text.encode()) == value


def _has_surrogate(value) -> bool:
    """The oracle: any string (key or value) holding a surrogate code point."""
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
texts_with_surrogates = st.lists(st.characters() | surrogates, max_size=6).map("".join)
values_with_surrogates = st.recursive(
    st.none() | st.integers() | texts_with_surrogates,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(texts_with_surrogates, kids, max_size=4)
    ),
    max_leaves=12,
)


def _escaped(value, upper: bool) -> str:
    """``value`` as ASCII JSON text, its escapes in upper case if asked."""
    text = json.dumps(value)  # ensure_ascii: every surrogate (and pair) as \\uXXXX
    if upper:
        text = re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m[1].upper(), text)
    return text


@st.composite
def with_a_lone_surrogate(draw):
    """A JSON value with a lone surrogate injected in a key or a value, somewhere."""
    alone = draw(st.text(max_size=3)) + draw(surrogates) + draw(st.text(max_size=3))
    value = draw(json_values)
    holder = draw(st.sampled_from(["key", "value", "element"]))
    if holder == "key":
        value = {alone: value}
    elif holder == "value":
        value = {"v": value, "w": alone}
    else:
        value = [value, alone]
    for sibling in draw(st.lists(json_values, max_size=3)):
        value = draw(st.sampled_from([[sibling, value], {"k": value, "s": sibling}]))
    return value


@pytest.mark.property
@given(with_a_lone_surrogate(), st.booleans())
def test_refuses_any_json_with_a_lone_surrogate_injected(value, upper):
    text = _escaped(value, upper)
    with pytest.raises(BadJSON, match="lone UTF-16 surrogate"):
        parse_json(text)
    with pytest.raises(BadJSON, match="lone UTF-16 surrogate"):
        parse_json(text.encode())


@pytest.mark.property
@given(values_with_surrogates, st.booleans())
def test_refuses_exactly_what_holds_a_lone_surrogate(value, upper):
    """Surrogates side by side in a Python string are a pair in JSON: the reader and
    the standard library must agree on which texts hold one alone."""
    text = _escaped(value, upper)
    if _has_surrogate(json.loads(text)):
        with pytest.raises(BadJSON, match="lone UTF-16 surrogate"):
            parse_json(text)
    else:
        assert parse_json(text) == json.loads(text)


@pytest.mark.property
@given(json_values, st.booleans())
def test_round_trips_any_json_escaped(value, upper):
    text = _escaped(value, upper)  # non-BMP characters as surrogate pairs
    assert parse_json(text) == value
    assert parse_json(text.encode()) == value


def test_lone_surrogate_finds_a_value_made_by_code():
    assert lone_surrogate({"a": [1, {"b": "x\ud800"}]}) == (["a", 1, "b"], r"\ud800")
    # A key holding one: the path is the object's (a path never holds a surrogate).
    assert lone_surrogate({"a": [{"k\udfff": 1}]}) == (["a", 0], r"\udfff")
    assert lone_surrogate("\udc00") == ([], r"\udc00")
    assert lone_surrogate({"a": ["\U0001f600", 1.5, None, True]}) is None
