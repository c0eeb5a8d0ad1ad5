"""The one way hitl-nb makes an httpx client (hitl_nb.client._clients): every client of the
package comes from it, and its clients verify with the process's one TLS context and
follow no redirect unless asked."""

from __future__ import annotations

import ast
import asyncio
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from hitl_nb.client import _clients, http_client, sync_http_client, tls_context
from tests.helpers.smtp import Cert, throwaway_cert

PACKAGE = Path(__file__).resolve().parents[2] / "hitl_nb"
FACTORY = PACKAGE / "client" / "_clients.py"
#: What makes an httpx client: the classes, and the functions that make one per call.
MAKERS = {"Client", "AsyncClient", "get", "post", "put", "patch", "delete", "head"}
MAKERS |= {"options", "request", "stream"}
TRANSPORTS = {"HTTPTransport", "AsyncHTTPTransport"}


def _httpx_calls(path: Path) -> Iterator[tuple[str, ast.Call]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "httpx"
        ):
            yield node.func.attr, node


def test_every_httpx_client_of_the_package_is_made_by_the_factory() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "from httpx import" not in text, f"{path}: import httpx, call httpx.NAME"
        for name, call in _httpx_calls(path):
            where = f"{path.relative_to(PACKAGE.parent)}:{call.lineno} httpx.{name}()"
            if name in MAKERS and path != FACTORY:
                found.append(f"{where}: use hitl_nb.client.http_client / sync_http_client")
            if name in TRANSPORTS and not any(k.arg == "verify" for k in call.keywords):
                found.append(f"{where}: give it verify=tls_context()")
    assert found == []


def test_the_scan_sees_what_it_forbids(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import httpx\nhttpx.AsyncClient()\nhttpx.post('u')\nhttpx.AsyncHTTPTransport()\n"
    )
    assert [name for name, _ in _httpx_calls(sample)] == [
        "AsyncClient",
        "post",
        "AsyncHTTPTransport",
    ]


def test_its_defaults_are_httpx_own_and_no_redirects() -> None:
    async def made() -> None:
        async with http_client() as client, httpx.AsyncClient() as bare:
            assert client.timeout == bare.timeout
            assert client.follow_redirects is False

    asyncio.run(made())
    with sync_http_client(timeout=3, headers={"X-A": "b"}, base_url="http://127.0.0.1:9/") as c:
        assert c.timeout == httpx.Timeout(3)
        assert c.headers["x-a"] == "b" and str(c.base_url) == "http://127.0.0.1:9/"
        assert c.follow_redirects is False


def test_its_clients_load_no_certificates_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    tls_context()
    loads: list[object] = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        loads.append(args)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    sync_http_client().close()
    asyncio.run(http_client().aclose())
    assert loads == []


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/here")
        else:
            self.send_response(200)
        self.send_header("Content-Length", "4")
        self.end_headers()
        self.wfile.write(b"here")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def https(tmp_path: Path) -> Iterator[tuple[str, Cert]]:
    """An HTTPS server on 127.0.0.1 with a certificate no default bundle trusts."""
    cert = throwaway_cert(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.socket = cert.server_context().wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_its_clients_verify_with_the_one_tls_context(
    https: tuple[str, Cert], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = https
    trusting = ssl.create_default_context(cafile=str(cert.cert))
    monkeypatch.setattr(_clients, "tls_context", lambda: trusting)

    async def fetch() -> int:
        async with http_client() as client:
            return (await client.get(url + "/")).status_code

    assert asyncio.run(fetch()) == 200
    with sync_http_client() as client:
        assert client.get(url + "/").status_code == 200
    # Without that context the same certificate is refused: it is the one verified with.
    with httpx.Client() as bare, pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY"):
        bare.get(url + "/")


def test_redirects_are_followed_only_when_asked(
    https: tuple[str, Cert], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = https
    trusting = ssl.create_default_context(cafile=str(cert.cert))
    monkeypatch.setattr(_clients, "tls_context", lambda: trusting)
    with sync_http_client() as client:
        assert client.get(url + "/moved").status_code == 302
    with sync_http_client(follow_redirects=True) as client:
        answer = client.get(url + "/moved")
        assert answer.status_code == 200 and answer.url.path == "/here"
