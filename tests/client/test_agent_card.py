"""Tests for hitl_nb.client._agent_card: which interface a client picks, and card decoding."""

from __future__ import annotations

import asyncio

import pytest

from hitl_nb.client import HitlClient
from hitl_nb.client._agent_card import (
    NoUsableInterface,
    agent_card_url,
    agent_card_urls,
    choose_interface,
    declares_extension,
    parse_agent_card,
)
from hitl_nb.errors import ProtocolViolation
from tests.helpers import wire

MIXED = wire.card(
    "http://a/rpc",
    more=[
        {"url": "http://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": "http://a/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        {"url": "http://a/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    ],
)


@pytest.mark.parametrize(
    "binding, version, url",
    [
        ("auto", "auto", "http://a/rpc"),
        ("HTTP+JSON", "auto", "http://a/rest"),
        ("http+json", "1.0", "http://a/rest"),
        ("auto", "0.3", "http://a/old"),
        ("JSONRPC", "0.3.0", "http://a/old"),
        ("GRPC", "auto", "http://a/grpc"),
    ],
)
def test_choose_interface(binding: str, version: str, url: str) -> None:
    assert choose_interface(parse_agent_card(MIXED), binding, version).url == url


def test_no_usable_interface_lists_what_is_offered() -> None:
    card = parse_agent_card(wire.card("http://a/ws", binding="WEBSOCKET"))
    with pytest.raises(NoUsableInterface, match="WEBSOCKET 1.0 at http://a/ws"):
        choose_interface(card)
    with pytest.raises(NoUsableInterface):
        choose_interface(parse_agent_card(wire.card_v03("http://a/")), "HTTP+JSON")


def test_forced_03_uses_a_jsonrpc_endpoint_listed_as_10() -> None:
    selection = choose_interface(parse_agent_card(wire.card("http://a/rpc")), version="0.3")
    assert (selection.url, selection.binding, selection.version) == (
        "http://a/rpc",
        "JSONRPC",
        "0.3",
    )
    with pytest.raises(NoUsableInterface):
        choose_interface(
            parse_agent_card(wire.card("http://a/r", binding="HTTP+JSON")), version="0.3"
        )


def test_bad_choices_are_value_errors() -> None:
    with pytest.raises(ValueError, match="binding"):
        choose_interface(parse_agent_card(MIXED), "WEBSOCKET")
    with pytest.raises(ValueError, match="version"):
        choose_interface(parse_agent_card(MIXED), version="2.0")


def test_v03_card_and_extension_declaration() -> None:
    old = parse_agent_card(wire.card_v03("http://a/"))
    assert choose_interface(old).version == "0.3"
    assert declares_extension(old)
    assert not declares_extension(parse_agent_card(wire.card("http://a", extension=False)))


def test_bad_cards() -> None:
    with pytest.raises(ProtocolViolation, match="not a JSON object"):
        parse_agent_card([1])
    with pytest.raises(ProtocolViolation, match="does not decode"):
        parse_agent_card({"supportedInterfaces": "nope", "name": 1})


def test_agent_card_url() -> None:
    assert agent_card_url("http://a:1/") == "http://a:1/.well-known/agent-card.json"
    assert agent_card_url("http://a/x/card.json") == "http://a/x/card.json"
    assert agent_card_urls("http://a:1") == ["http://a:1/.well-known/agent-card.json"]
    assert agent_card_urls("http://a/rpc") == [
        "http://a/rpc/.well-known/agent-card.json",
        "http://a/.well-known/agent-card.json",
    ]


@pytest.mark.parametrize("bad", ["file:///etc/passwd", "/rpc", "rpc", "http://[::1", "ftp://a/"])
def test_interfaces_without_an_absolute_http_url_are_skipped(bad: str) -> None:
    # An interface is usable only at an absolute http(s) URL; chosen otherwise, every
    # call would fail as AgentUnreachable (retried as a network fault) or httpx.InvalidURL.
    good = {"url": "http://a/rpc2", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    assert choose_interface(parse_agent_card(wire.card(bad, more=[good]))).url == "http://a/rpc2"
    with pytest.raises(NoUsableInterface, match="absolute http"):
        choose_interface(parse_agent_card(wire.card(bad)))
    with pytest.raises(NoUsableInterface, match="absolute http"):
        choose_interface(parse_agent_card(wire.card(bad)), "JSONRPC", "0.3")


def test_a_card_with_10000_interfaces_gives_a_short_error() -> None:
    grpc = [
        {"url": f"http://a/{i}", "protocolBinding": "WEBSOCKET", "protocolVersion": "1.0"}
        for i in range(10_000)
    ]
    card = wire.card("http://a/g", more=grpc)
    card["supportedInterfaces"] = grpc
    with pytest.raises(NoUsableInterface, match="and 9990 more") as caught:
        choose_interface(parse_agent_card(card))
    assert len(str(caught.value)) < 2000


@pytest.mark.parametrize("url", ["http://[::1", "nonsense", "ftp://a/"])
def test_a_bad_agent_url_is_a_value_error_naming_it(url: str) -> None:
    with pytest.raises(ValueError, match="not an absolute http"):
        asyncio.run(HitlClient(url).connect())
