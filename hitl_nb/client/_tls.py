"""One TLS context for every HTTP client of the process, made on first use.

httpx builds a fresh ``ssl.SSLContext`` (loading the certificate bundle) for each
client it creates unless it is given one: about 30 ms a client, paid by every
``Conversation.start`` and by each request of the gateway's discovery, for agents and
servers on plain ``http://`` too. httpx's own default context is made once here and
shared (an ``SSLContext`` may serve many connections and threads at once) by every
client made by :mod:`hitl_nb.client._clients` and the gateway's transports; a client
given ``httpx_client=`` of its own is left alone. The environment
(``SSL_CERT_FILE``, ``SSL_CERT_DIR``) is read when it is made, as httpx reads it when
a client is.
"""

from __future__ import annotations

import functools
import ssl

import httpx

__all__ = ["tls_context"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certificates verified), made once per process."""
    return httpx.create_ssl_context()
