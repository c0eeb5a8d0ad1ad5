"""Finding an agent: its agent card (A2A §8) and the interface a client will use.

A 1.0 card lists ``supportedInterfaces`` (url, protocolBinding, protocolVersion); a 0.3
card has ``url`` + ``preferredTransport`` (+ ``additionalInterfaces``) and
``protocolVersion: "0.3.x"``. Both decode to the same :class:`~hitl_nb.a2a.AgentCard`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from hitl_nb.a2a import (
    CODEC_V03,
    CODEC_V1,
    VERSIONS,
    A2AVersion,
    AgentCard,
    AgentInterface,
    BindingName,
    binding_choice,
    grpc_missing,
    major_minor,
    version_choice,
)
from hitl_nb.errors import NoUsableInterface, ProtocolViolation, WireDecodeError
from hitl_nb.spec import EXTENSION_URI

__all__ = [
    "AGENT_CARD_PATH",
    "Selection",
    "agent_card_url",
    "agent_card_urls",
    "choose_interface",
    "declares_extension",
    "parse_agent_card",
    "usable_grpc_url",
    "usable_url",
]

#: Where an agent serves its card (A2A §8.2).
AGENT_CARD_PATH = "/.well-known/agent-card.json"
_SHOWN_INTERFACES = 10


@dataclass(frozen=True)
class Selection:
    """The interface chosen: where to send, which binding, which wire version."""

    url: str
    binding: BindingName
    version: A2AVersion


def agent_card_url(url: str) -> str:
    """The card's URL for an agent base URL (a URL already naming a ``.json`` is kept)."""
    if url.rstrip("/").endswith(".json"):
        return url
    return url.rstrip("/") + AGENT_CARD_PATH


def agent_card_urls(url: str) -> list[str]:
    """Where to look for the card: below ``url``, then at the origin's well-known path
    (for a URL naming an endpoint such as ``http://host/rpc``)."""
    first = agent_card_url(url)
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}{AGENT_CARD_PATH}"
    return [first] if origin == first else [first, origin]


def parse_agent_card(raw: Any) -> AgentCard:
    """Decode a card in either version's shape; raises ProtocolViolation naming the member."""
    if not isinstance(raw, dict):
        raise ProtocolViolation("the agent card is not a JSON object")
    codec = CODEC_V1 if "supportedInterfaces" in raw else CODEC_V03
    try:
        card = codec.decode_agent_card(raw)
    except WireDecodeError as exc:
        raise ProtocolViolation(f"the agent card does not decode: {exc}") from exc
    card.raw = raw
    return card


def usable_url(url: str) -> bool:
    """True for an absolute ``http`` or ``https`` URL with a host (what an interface needs)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.host)


def usable_grpc_url(url: str) -> bool:
    """True for a gRPC interface's address: ``grpc(s)://host:port``, ``http(s)://...`` or
    a bare ``host:port``."""
    if not isinstance(url, str) or not url or any(c.isspace() for c in url):
        return False
    try:
        parts = urlsplit(url if "://" in url else "grpc://" + url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        return False
    return parts.scheme.lower() in ("grpc", "grpcs", "http", "https") and bool(parts.hostname)


def choose_interface(card: AgentCard, binding: str = "auto", version: str = "auto") -> Selection:
    """The first interface, in the card's order of preference, that fits the request.

    ``binding`` is ``"auto"``, ``"JSONRPC"``, ``"HTTP+JSON"`` or ``"GRPC"``; ``version``
    is ``"auto"``, ``"1.0"`` or ``"0.3"``. With ``"auto"`` versions, 1.0 interfaces win over
    0.3 ones. A gRPC interface (A2A 1.0 only) is taken by ``"auto"`` only where
    ``hitl-nb[grpc]`` is installed; asked for by name without it, ``ImportError`` says
    what to install. An explicit ``"0.3"`` falls back to the card's JSON-RPC interface when no
    interface is listed as 0.3. Raises :class:`NoUsableInterface` listing what is offered.
    """
    want_binding = binding_choice(binding)
    want_version = version_choice(version)
    if want_binding == "GRPC" and grpc_missing() is not None:
        raise ImportError(grpc_missing())

    def fits(iface: AgentInterface, v: A2AVersion) -> BindingName | None:
        if major_minor(iface.protocol_version) != v:
            return None
        try:
            b = binding_choice(iface.protocol_binding)
        except ValueError:
            return None  # a binding this client does not speak
        if b == "auto" or (want_binding != "auto" and b != want_binding):
            return None
        if b == "GRPC":
            if v != "1.0" or not usable_grpc_url(iface.url) or grpc_missing() is not None:
                return None
            return b
        if not usable_url(iface.url):
            return None
        if v == "0.3" and b == "HTTP+JSON":
            return None  # 0.3 agents are reached over JSON-RPC
        return b

    order = VERSIONS if want_version == "auto" else (want_version,)
    for v in order:
        for iface in card.supported_interfaces:
            fitting = fits(iface, v)
            if fitting is not None:
                return Selection(iface.url, fitting, v)
    if want_version == "0.3" and want_binding in ("auto", "JSONRPC"):
        # Asked for 0.3 explicitly: agents commonly serve both dialects on one JSON-RPC
        # endpoint (A2A 1.0 treats a request without A2A-Version as 0.3, §3.6).
        for iface in card.supported_interfaces:
            if iface.protocol_binding.upper() == "JSONRPC" and usable_url(iface.url):
                return Selection(iface.url, "JSONRPC", "0.3")
    shown = card.supported_interfaces[:_SHOWN_INTERFACES]
    offered = ", ".join(f"{i.protocol_binding} {i.protocol_version} at {i.url}" for i in shown)
    if len(card.supported_interfaces) > len(shown):  # a hostile card may list 10,000
        offered += f" and {len(card.supported_interfaces) - len(shown)} more"
    raise NoUsableInterface(
        f"agent {card.name!r} offers no interface for binding={binding!r}, "
        f"version={version!r}; it offers: {offered or 'nothing'} "
        "(this client speaks JSONRPC 1.0/0.3 and HTTP+JSON 1.0 at absolute http(s) URLs, "
        "and GRPC 1.0 with hitl-nb[grpc] installed)"
    )


def declares_extension(card: AgentCard) -> bool:
    """True when the card's ``capabilities.extensions`` lists hitl-prompt/v1."""
    return card.extension(EXTENSION_URI) is not None
