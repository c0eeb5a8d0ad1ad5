"""One TLS context per process (hitl_nb.client._tls): clients made by hitl-nb share it
instead of loading the certificate bundle again, and it verifies certificates."""

from __future__ import annotations

import ssl

import pytest

from hitl_nb.client import GatewayClient, GatewayInfo, HitlClient
from hitl_nb.client._tls import tls_context


def test_the_context_verifies_and_is_made_once() -> None:
    context = tls_context()
    assert context is tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname


def test_clients_load_no_certificates_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    tls_context()
    loads: list[object] = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        loads.append(args)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    clients = [HitlClient("http://127.0.0.1:9/") for _ in range(3)]
    gateway = GatewayClient(GatewayInfo("http://127.0.0.1:9/", None, "a test"))
    gateway.close()
    assert loads == []
    own = HitlClient("http://127.0.0.1:9/", httpx_client=None)
    assert own._http_client is not clients[0]._http_client  # a client each, one context
