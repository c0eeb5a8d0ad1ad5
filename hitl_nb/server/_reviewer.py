"""``hitl-nb inbox``: a web page where a reviewer answers prompts without a notebook.

The page is a notebook shipped in the package (``reviewer_inbox.ipynb``) that shows an
:class:`~hitl_nb.notebook.Inbox`, served by Voila (``pip install hitl-nb[voila]``): the
reviewer sees the page's widgets, never its code. Only core ipywidgets are used, so it
renders in Voila unchanged.

The page's kernel is Voila's, not the Jupyter server's, so the command tells it where the
gateway is (``HITL_NB_GATEWAY`` and ``HITL_NB_GATEWAY_TOKEN``, which
:func:`hitl_nb.client.find_gateway` reads): answers go through that gateway, as the user
whose token the command was given (S-3: the gateway checks ``allowed_responders``
against that user). The gateway is a Jupyter server's (``--server`` its base URL) or a
JupyterHub's service (``--server https://hub.example.org/services/hitl/``, with a hub
token); on a hub, without ``--server``, the hub's service is found from the hub's
service list, as kernels find it. The page itself asks for its own token.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hitl_nb._process import replace_or_forward
from hitl_nb.client import find_gateway, gateway_at
from hitl_nb.errors import GatewayUnavailable

__all__ = ["PAGE", "find_server", "register_cli", "voila_command"]

#: The bundled reviewer page (a notebook Voila renders).
PAGE = Path(__file__).with_name("reviewer_inbox.ipynb")


def _running() -> Iterator[dict[str, Any]]:
    from jupyter_server.serverapp import list_running_servers

    yield from list_running_servers()


def _has_gateway(url: str, token: str | None) -> bool:
    try:
        return gateway_at(url, token) is not None
    except GatewayUnavailable:
        return False


def find_server(
    server: str | None = None,
    token: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[str, str | None]:
    """The URL (ending in ``/``) and token of a gateway: a Jupyter server with the
    extension, or a JupyterHub's service.

    ``server``/``token`` when given; else ``HITL_NB_GATEWAY``/``HITL_NB_GATEWAY_TOKEN``;
    else, on a JupyterHub, the hub's service; else the first running Jupyter server of
    this user whose gateway answers. Raises ``LookupError`` saying what to do when there
    is none.
    """
    env = os.environ if environ is None else environ
    server = server or env.get("HITL_NB_GATEWAY") or None
    token = token or env.get("HITL_NB_GATEWAY_TOKEN") or env.get("JUPYTERHUB_API_TOKEN") or None
    if server:
        url = server if server.endswith("/") else server + "/"
        if not _has_gateway(url, token):
            raise LookupError(
                f"{url} has no hitl-nb gateway that accepts this token "
                "(is the server running, and is the token right?)"
            )
        return url, token
    try:
        on_hub = find_gateway(environ={**env, "HITL_NB_GATEWAY": ""}, connection_file="")
    except GatewayUnavailable:
        on_hub = None
    if on_hub is not None:
        return on_hub.url, on_hub.token
    for info in _running():
        url = str(info.get("url", ""))
        if not url:
            continue
        url = url if url.endswith("/") else url + "/"
        mine = token or (info.get("token") if isinstance(info.get("token"), str) else None)
        if _has_gateway(url, mine):
            return url, mine or None
    raise LookupError(
        "no running Jupyter server with hitl-nb's gateway was found; start "
        "one (jupyter lab) or name it: hitl-nb inbox --server URL --token "
        "TOKEN"
    )


def voila_command(
    port: int, page_token: str, *, ip: str = "127.0.0.1", theme: str = "light"
) -> list[str]:
    """The command line that serves :data:`PAGE` with Voila."""
    return [
        sys.executable,
        "-m",
        "voila",
        str(PAGE),
        "--no-browser",
        f"--port={port}",
        f"--Voila.ip={ip}",
        f"--token={page_token}",
        f"--theme={theme}",
        "--Voila.port_retries=0",
    ]


def _run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("voila") is None:
        print("hitl-nb inbox needs Voila: pip install 'hitl-nb[voila]'", file=sys.stderr)
        return 2
    try:
        url, token = find_server(args.server, args.token)
    except LookupError as exc:
        print(f"hitl-nb inbox: {exc}", file=sys.stderr)
        return 2
    page_token = args.page_token or secrets.token_urlsafe(24)
    env = {**os.environ, "HITL_NB_GATEWAY": url}
    if token:
        env["HITL_NB_GATEWAY_TOKEN"] = token
    command = voila_command(args.port, page_token, ip=args.ip, theme=args.theme)
    print(
        f"The reviewer page for the prompts of {url} is at "
        f"http://{args.ip}:{args.port}/?token={page_token}",
        flush=True,
    )
    # Become Voila (or forward stop signals to it): stopping this command stops the page.
    return replace_or_forward(command, env=env)


def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hitl-nb inbox`` to the command's parser."""
    p = sub.add_parser(
        "inbox",
        help="serve a reviewer page (Voila) to answer the open prompts of a Jupyter server",
        description="Serve a web page where a reviewer answers the open prompts of a "
        "Jupyter server with hitl-nb's extension, without opening a notebook. Needs "
        "Voila (pip install 'hitl-nb[voila]').",
    )
    p.add_argument(
        "--server",
        help="the Jupyter server's URL, or a JupyterHub service's "
        "(https://hub.example.org/services/hitl/); default: the hub's service on a "
        "hub, else the running server",
    )
    p.add_argument("--token", help="a token of that server or hub: answers are given as its user")
    p.add_argument("--port", type=int, default=8866, help="the page's port (default 8866)")
    p.add_argument("--ip", default="127.0.0.1", help="the page's address (default 127.0.0.1)")
    p.add_argument("--page-token", help="the page's own token (default: a random one)")
    p.add_argument("--theme", choices=["light", "dark"], default="light")
    p.set_defaults(func=_run)
