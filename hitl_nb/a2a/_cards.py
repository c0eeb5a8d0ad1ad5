"""Agent cards in A2A 1.0 and 0.3 JSON (exposed by the codecs as ``*_agent_card``).

1.0 lists ``supportedInterfaces``; 0.3 has ``url`` + ``preferredTransport`` (+
``additionalInterfaces``). Extension entries always carry ``required`` and ``params``
written out (hitl-prompt/v1 §Activation wants both, and some SDKs drop defaults).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hitl_nb.a2a import _wire as w
from hitl_nb.a2a._model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
)

__all__ = [
    "decode_card_v03",
    "decode_card_v1",
    "decode_extension",
    "decode_skill",
    "encode_card_v03",
    "encode_card_v1",
    "encode_extension",
    "encode_skill",
]


# -- shared by both versions ----------------------------------------------------------


def _encode_card(
    card: AgentCard, lead: dict[str, Any], where: dict[str, Any], tail: dict[str, Any]
) -> dict[str, Any]:
    """The card members both versions write, with the version's own around them.

    ``lead`` comes first, ``where`` (how to reach the agent) after the description,
    ``tail`` after the skills.
    """
    caps = card.capabilities
    out: dict[str, Any] = {
        **lead,
        "name": card.name,
        "description": card.description,
        **where,
        "version": card.version,
        "capabilities": {
            "streaming": caps.streaming,
            "pushNotifications": caps.push_notifications,
            "extensions": [encode_extension(e) for e in caps.extensions],
        },
        "defaultInputModes": list(card.default_input_modes),
        "defaultOutputModes": list(card.default_output_modes),
        "skills": [encode_skill(s) for s in card.skills],
        **tail,
    }
    w.put(out, "documentationUrl", card.documentation_url)
    w.put(out, "provider", card.provider)
    return out


def _decode_card(
    o: dict[str, Any],
    pointer: str,
    interfaces: Callable[[], list[AgentInterface]],
    extended: Callable[[dict[str, Any], str], bool],
) -> AgentCard:
    """The card members both versions read.

    The version's hooks read the interfaces and the extended-card flag (given the
    capabilities object and its pointer); they are called in member order, so the first
    problem reported is the first one met.
    """
    caps_ptr = w.child(pointer, "capabilities")
    caps = w.opt_obj(o, "capabilities", pointer) or {}
    return AgentCard(
        name=w.req_str(o, "name", pointer),
        description=w.opt_str(o, "description", pointer) or "",
        version=w.opt_str(o, "version", pointer) or "",
        supported_interfaces=interfaces(),
        capabilities=AgentCapabilities(
            streaming=w.opt_bool(caps, "streaming", caps_ptr),
            push_notifications=w.opt_bool(caps, "pushNotifications", caps_ptr),
            extensions=w.opt_list(caps, "extensions", caps_ptr, decode_extension),
            extended_agent_card=extended(caps, caps_ptr),
        ),
        skills=w.opt_list(o, "skills", pointer, decode_skill),
        default_input_modes=w.opt_list(o, "defaultInputModes", pointer, w.string),
        default_output_modes=w.opt_list(o, "defaultOutputModes", pointer, w.string),
        documentation_url=w.opt_str(o, "documentationUrl", pointer),
        provider=w.opt_obj(o, "provider", pointer),
        raw=o,
    )


def encode_extension(ext: AgentExtension) -> dict[str, Any]:
    """An AgentExtension entry with ``required`` and ``params`` written out."""
    out: dict[str, Any] = {"uri": ext.uri}
    w.put(out, "description", ext.description)
    out["required"] = ext.required
    out["params"] = dict(ext.params) if ext.params is not None else {}
    return out


def decode_extension(value: Any, pointer: str = "") -> AgentExtension:
    """An AgentExtension entry (same JSON in 1.0 and 0.3)."""
    o = w.obj(value, pointer)
    return AgentExtension(
        uri=w.req_str(o, "uri", pointer),
        description=w.opt_str(o, "description", pointer),
        required=w.opt_bool(o, "required", pointer),
        params=w.opt_obj(o, "params", pointer),
    )


def encode_skill(skill: AgentSkill) -> dict[str, Any]:
    """An AgentSkill entry."""
    out: dict[str, Any] = {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "tags": list(skill.tags),
    }
    w.put(out, "examples", list(skill.examples))
    w.put(out, "inputModes", list(skill.input_modes))
    w.put(out, "outputModes", list(skill.output_modes))
    return out


def decode_skill(value: Any, pointer: str = "") -> AgentSkill:
    """An AgentSkill entry (same JSON in 1.0 and 0.3)."""
    o = w.obj(value, pointer)
    return AgentSkill(
        id=w.req_str(o, "id", pointer),
        name=w.opt_str(o, "name", pointer) or "",
        description=w.opt_str(o, "description", pointer) or "",
        tags=w.opt_list(o, "tags", pointer, w.string),
        examples=w.opt_list(o, "examples", pointer, w.string),
        input_modes=w.opt_list(o, "inputModes", pointer, w.string),
        output_modes=w.opt_list(o, "outputModes", pointer, w.string),
    )


# -- A2A 1.0 --------------------------------------------------------------------------


def encode_card_v1(card: AgentCard) -> dict[str, Any]:
    """An AgentCard as 1.0 JSON; extension entries keep ``required`` and ``params``."""
    interfaces = [_encode_interface(i) for i in card.supported_interfaces]
    out = _encode_card(card, {}, {"supportedInterfaces": interfaces}, {})
    if card.capabilities.extended_agent_card:
        out["capabilities"]["extendedAgentCard"] = True
    return out


def _encode_interface(iface: AgentInterface) -> dict[str, Any]:
    out = {
        "url": iface.url,
        "protocolBinding": iface.protocol_binding,
        "protocolVersion": iface.protocol_version,
    }
    w.put(out, "tenant", iface.tenant)
    return out


def decode_card_v1(value: Any, pointer: str = "") -> AgentCard:
    """An AgentCard from 1.0 JSON; ``raw`` keeps the object as received."""
    o = w.obj(value, pointer)
    return _decode_card(
        o,
        pointer,
        lambda: w.opt_list(o, "supportedInterfaces", pointer, _decode_interface),
        lambda caps, caps_ptr: w.opt_bool(caps, "extendedAgentCard", caps_ptr),
    )


def _decode_interface(value: Any, pointer: str) -> AgentInterface:
    o = w.obj(value, pointer)
    return AgentInterface(
        url=w.req_str(o, "url", pointer),
        protocol_binding=w.req_str(o, "protocolBinding", pointer),
        protocol_version=w.opt_str(o, "protocolVersion", pointer) or "",
        tenant=w.opt_str(o, "tenant", pointer),
    )


# -- A2A 0.3 --------------------------------------------------------------------------


def encode_card_v03(card: AgentCard) -> dict[str, Any]:
    """An AgentCard as 0.3 JSON: the first interface is ``url`` + ``preferredTransport``."""
    if not card.supported_interfaces:
        raise ValueError("an A2A 0.3 card needs at least one interface")
    first = card.supported_interfaces[0]
    tail: dict[str, Any] = {}
    w.put(
        tail,
        "additionalInterfaces",
        [{"url": i.url, "transport": i.protocol_binding} for i in card.supported_interfaces],
    )
    if card.capabilities.extended_agent_card:
        tail["supportsAuthenticatedExtendedCard"] = True
    return _encode_card(
        card,
        {"protocolVersion": "0.3.0"},
        {"url": first.url, "preferredTransport": first.protocol_binding},
        tail,
    )


def decode_card_v03(value: Any, pointer: str = "") -> AgentCard:
    """An AgentCard from 0.3 JSON (interfaces gathered from url and additionalInterfaces)."""
    o = w.obj(value, pointer)
    version = w.opt_str(o, "protocolVersion", pointer) or "0.3.0"
    url = w.req_str(o, "url", pointer)
    preferred = w.opt_str(o, "preferredTransport", pointer) or "JSONRPC"
    interfaces = [AgentInterface(url=url, protocol_binding=preferred, protocol_version=version)]

    def extra(value: Any, ptr: str) -> AgentInterface:
        i = w.obj(value, ptr)
        return AgentInterface(
            url=w.req_str(i, "url", ptr),
            protocol_binding=w.req_str(i, "transport", ptr),
            protocol_version=version,
        )

    for iface in w.opt_list(o, "additionalInterfaces", pointer, extra):
        if (iface.url, iface.protocol_binding) != (url, preferred):
            interfaces.append(iface)
    return _decode_card(
        o,
        pointer,
        lambda: interfaces,
        lambda caps, caps_ptr: w.opt_bool(o, "supportsAuthenticatedExtendedCard", pointer),
    )
