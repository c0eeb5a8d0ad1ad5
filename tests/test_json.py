import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb._json import dumps_compact, json_depth, parse_json
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
