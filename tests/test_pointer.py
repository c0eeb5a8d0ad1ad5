"""RFC 6901 escaping: the examples of §3/§5 and round trips of any keys."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb._pointer import escape, join, pointer, split, unescape


@pytest.mark.parametrize(
    ("key", "token"),
    [
        pytest.param("a/b", "a~1b", id="slash"),
        pytest.param("m~n", "m~0n", id="tilde"),
        pytest.param("~1", "~01", id="tilde-one-stays-two-characters"),
        pytest.param("", "", id="empty-key"),
        pytest.param(0, "0", id="index"),
    ],
)
def test_escape_and_unescape(key, token):
    assert escape(key) == token
    assert unescape(token) == str(key)


def test_join_and_pointer():
    assert join("", "a/b", 0) == "/a~1b/0"
    assert join("/x") == "/x"
    assert pointer([]) == ""
    assert pointer(["", " "]) == "// "


def test_split():
    assert split("") == []
    assert split("/") == [""]
    assert split("/a~1b/x~0y/~01") == ["a/b", "x~y", "~1"]
    with pytest.raises(ValueError, match="starts with '/'"):
        split("a/b")


@pytest.mark.property
@given(st.lists(st.text()))
def test_any_keys_round_trip(keys):
    assert split(pointer(keys)) == keys
