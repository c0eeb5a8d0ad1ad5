"""The one way hitl-nb makes an httpx client (:func:`http_client`, :func:`sync_http_client`).

Every client the package makes verifies certificates with the process's one TLS
context (:func:`~hitl_nb.client._tls.tls_context`, so none loads the certificate
bundle again), has its timeouts and connection limits said where it is made, and never
follows a redirect unless its maker asks: a request that carries an answer, a token or
a webhook's secret must not go to a host nobody named. ``tests/client/test_clients.py``
fails when a module of ``hitl_nb`` makes an httpx client any other way.

The defaults are httpx's own (5 s, 100 connections of which 20 kept), so a client that
states none behaves as the bare ``httpx.AsyncClient()`` it replaces. A ``transport`` of
the caller's own carries its own TLS and limits (the gateway's lanes take the same
context).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx

from ._tls import tls_context

__all__ = ["LIMITS", "TIMEOUT", "http_client", "sync_http_client"]

#: httpx's default timeout: 5 s to connect, write, read and wait for a connection.
TIMEOUT = httpx.Timeout(5.0)
#: httpx's default connection limits: 100 connections, 20 of them kept when idle.
LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)

#: httpx's event hooks: ``{"request": [...], "response": [...]}``.
Hooks = Mapping[str, list[Callable[..., Any]]]


def http_client(
    *,
    timeout: float | httpx.Timeout = TIMEOUT,
    headers: Mapping[str, str] | None = None,
    base_url: str = "",
    follow_redirects: bool = False,
    limits: httpx.Limits = LIMITS,
    event_hooks: Hooks | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` on the process's TLS context, with these timeouts and
    limits, following no redirect unless ``follow_redirects``."""
    return httpx.AsyncClient(
        verify=tls_context(),
        timeout=timeout,
        headers=headers,
        base_url=base_url,
        follow_redirects=follow_redirects,
        limits=limits,
        event_hooks=event_hooks,
        transport=transport,
    )


def sync_http_client(
    *,
    timeout: float | httpx.Timeout = TIMEOUT,
    headers: Mapping[str, str] | None = None,
    base_url: str = "",
    follow_redirects: bool = False,
    limits: httpx.Limits = LIMITS,
) -> httpx.Client:
    """The blocking ``httpx.Client`` made as :func:`http_client` makes its clients (for
    calls from a notebook cell's thread, which has no loop of its own to await on)."""
    return httpx.Client(
        verify=tls_context(),
        timeout=timeout,
        headers=headers,
        base_url=base_url,
        follow_redirects=follow_redirects,
        limits=limits,
    )
