"""The connection side of :class:`~hitl_nb.client.HitlClient`: settings, the agent's
card, the chosen interface and the headers every request carries.

:class:`ClientConnection` is the base class; the operations (send, stream, answer,
push configurations) are in ``_client.py`` and ``_push.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import httpx

from hitl_nb.a2a import AgentCard, BindingChoice, VersionChoice, codec_for
from hitl_nb.errors import ExtensionNotDeclared, ProtocolViolation
from hitl_nb.spec import (
    EXTENSION_URI,
    HEADER_EXTENSIONS,
    HEADER_EXTENSIONS_V03,
    HEADER_VERSION,
    PromptEnvelope,
)

from ._agent_card import (
    Selection,
    agent_card_urls,
    choose_interface,
    declares_extension,
    parse_agent_card,
    usable_url,
)
from ._answer import AnswerReceipt
from ._bindings import Binding, binding_class
from ._clients import http_client
from ._follow import Reconnect
from ._http import HttpLimits, HttpSession
from ._inbound import PROPERTY_ORDERS, order_is_trusted
from ._trace import Trace

__all__ = ["DEFAULT_LIMITS", "DEFAULT_RECONNECT", "ClientConnection"]

log = logging.getLogger("hitl_nb.client")

#: The limits and retries a client uses unless given others.
DEFAULT_LIMITS = HttpLimits()
DEFAULT_RECONNECT = Reconnect()


class ClientConnection:
    """Settings, card and interface of a client (the base of
    :class:`~hitl_nb.client.HitlClient`, which documents the arguments)."""

    def __init__(
        self,
        agent: str | AgentCard | Mapping[str, Any],
        *,
        httpx_client: httpx.AsyncClient | None = None,
        binding: BindingChoice = "auto",
        version: VersionChoice = "auto",
        require_extension: bool = True,
        activate_extension: bool = True,
        headers: Mapping[str, str] | None = None,
        limits: HttpLimits = DEFAULT_LIMITS,
        reconnect: Reconnect = DEFAULT_RECONNECT,
        property_order: str = "auto",
        trace: bool | Trace = False,
    ) -> None:
        if not isinstance(trace, (bool, Trace)):
            raise TypeError(f"trace must be True, False or a Trace, got {type(trace).__name__}")
        if property_order not in PROPERTY_ORDERS:
            raise ValueError(
                f"property_order must be one of {', '.join(PROPERTY_ORDERS)}, "
                f"got {property_order!r}"
            )
        if not isinstance(limits, HttpLimits):
            raise TypeError(f"limits must be an HttpLimits, got {type(limits).__name__}")
        if not isinstance(reconnect, Reconnect):
            raise TypeError(f"reconnect must be a Reconnect, got {type(reconnect).__name__}")
        self._agent = agent
        self._own_client = httpx_client is None
        self._http_client = httpx_client or http_client()
        self._binding_choice = binding
        self._property_order = property_order
        self._version_choice = version
        self.require_extension = require_extension
        self.activate_extension = activate_extension
        self._extra_headers = dict(headers or {})
        #: The timeouts and size caps in force.
        self.limits = limits
        #: How dropped connections are retried.
        self.reconnect = reconnect
        self._card: AgentCard | None = None
        self._selection: Selection | None = None
        self._binding: Binding | None = None
        self._grpc: Any = None  # the GrpcSession when the gRPC interface is in use
        self._connect_lock = asyncio.Lock()
        self._prompts: OrderedDict[str, PromptEnvelope] = OrderedDict()
        self._contexts: OrderedDict[str, str] = OrderedDict()  # task id -> contextId
        self._receipts: OrderedDict[str, AnswerReceipt] = OrderedDict()
        #: Whether the agent echoed the activation header (None: no answer seen yet).
        self.activation_echoed: bool | None = None
        #: The wire trace (None unless made with ``trace=``).
        self.trace: Trace | None = None
        if isinstance(trace, Trace):
            self.trace = trace
        elif trace:
            self.trace = Trace()

    # -- connection ------------------------------------------------------------------

    async def __aenter__(self) -> Any:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections (only those of a client this object created) and
        the gRPC channel (when the gRPC interface was chosen)."""
        if self._grpc is not None:
            await self._grpc.aclose()
        if self._own_client:
            await self._http_client.aclose()

    async def connect(self) -> AgentCard:
        """Read the card and choose the interface (done once; later calls return it)."""
        async with self._connect_lock:
            if self._card is None:
                card = await self._resolve_card()
                selection = choose_interface(card, self._binding_choice, self._version_choice)
                if not declares_extension(card):
                    message = (
                        f"agent {card.name!r} does not declare {EXTENSION_URI} in its card "
                        "(capabilities.extensions): it will not send prompt envelopes"
                    )
                    if self.require_extension:
                        raise ExtensionNotDeclared(
                            message + "; pass require_extension=False to use it unstructured"
                        )
                    log.warning("%s; continuing unstructured", message)
                codec = codec_for(selection.version)
                if selection.binding == "GRPC":
                    from ._grpc import GrpcBinding, GrpcSession  # imports grpc: only here

                    session = GrpcSession(
                        selection.url,
                        self._headers(selection),
                        self.limits,
                        self._saw_extensions,
                        self.trace,
                    )
                    self._grpc = session
                    self._binding = GrpcBinding(session, selection.url, codec)
                else:
                    http = HttpSession(
                        self._http_client,
                        self._headers(selection),
                        self.limits,
                        self._on_response,
                        self.trace,
                    )
                    self._binding = binding_class(selection.binding)(http, selection.url, codec)
                self._binding.stable_order = not order_is_trusted(card, self._property_order)
                self._selection, self._card = selection, card
        return self._card

    async def _resolve_card(self) -> AgentCard:
        if isinstance(self._agent, AgentCard):
            return self._agent
        if isinstance(self._agent, Mapping):
            return parse_agent_card(dict(self._agent))
        if not usable_url(self._agent):
            raise ValueError(
                f"agent {self._agent!r} is not an absolute http(s) URL, a card dict or an AgentCard"
            )
        http = HttpSession(self._http_client, self._extra_headers, self.limits, trace=self.trace)
        urls = agent_card_urls(self._agent)
        for url in urls:
            try:
                answer = await http.request_json("GET", url, "agent card")
            except ProtocolViolation:
                if url is urls[-1]:
                    raise
                continue  # e.g. an HTML 404 page: try the next place
            if answer.status == 200:
                return parse_agent_card(answer.body)
        raise ProtocolViolation(
            f"no agent card at {' or '.join(urls)}: HTTP {answer.status}; "
            "pass the agent's base URL or its card URL"
        )

    def _headers(self, selection: Selection) -> dict[str, str]:
        headers: dict[str, str] = {HEADER_VERSION: selection.version}
        if self.activate_extension:
            name = HEADER_EXTENSIONS_V03 if selection.version == "0.3" else HEADER_EXTENSIONS
            headers[name] = EXTENSION_URI
        headers.update(self._extra_headers)
        return headers

    def _on_response(self, response: httpx.Response) -> None:
        if not self.activate_extension or self.activation_echoed:
            return
        values = response.headers.get_list(HEADER_EXTENSIONS) + response.headers.get_list(
            HEADER_EXTENSIONS_V03
        )
        self._saw_extensions(values, str(response.request.url))

    def _saw_extensions(self, values: list[str], where: str) -> None:
        """One answer's ``A2A-Extensions`` values (a header, or gRPC metadata)."""
        if not self.activate_extension or self.activation_echoed:
            return
        if EXTENSION_URI in (u.strip() for u in ",".join(values).split(",")):
            self.activation_echoed = True
        elif self.activation_echoed is None:
            self.activation_echoed = False
            log.warning(
                "agent at %s did not echo %s in its %s header (§Activation asks it to; "
                "agents built on a2a-sdk never do): continuing",
                where,
                EXTENSION_URI,
                HEADER_EXTENSIONS,
            )

    async def _ready(self) -> Binding:
        if self._binding is None:
            await self.connect()
        assert self._binding is not None
        return self._binding

    @property
    def card(self) -> AgentCard | None:
        """The agent's card (None before :meth:`connect`)."""
        return self._card

    @property
    def selection(self) -> Selection | None:
        """The interface in use: url, binding, version (None before :meth:`connect`)."""
        return self._selection

    @property
    def agent(self) -> str | AgentCard | Mapping[str, Any]:
        """The agent this client was made for: its URL (or the card it was given)."""
        return self._agent

    @property
    def extension_declared(self) -> bool | None:
        """Whether the card declares hitl-prompt/v1 (None before :meth:`connect`)."""
        return None if self._card is None else declares_extension(self._card)
