"""``hitl-nb hub-service``: the responder gateway as a JupyterHub service, for every user.

The hub starts it (a hub-managed service, :func:`hitl_nb.hub.configure` writes the entry)
and restarts it when it dies. What it needs from the hub comes in the environment the
hub gives every managed service: where to listen (``JUPYTERHUB_SERVICE_URL``), its URL
prefix (``JUPYTERHUB_SERVICE_PREFIX``, ``/services/hitl/``), its API token and OAuth
client id, the hub's API URL. What the administrator decides comes on the command line
(:mod:`._options`), secrets in the environment (``HITL_NB_DB_URL``,
``HITL_NB_COOKIE_SECRET``), never on the command line: the hub shows a service's
command to those who may read it.

Under the prefix: ``api/`` (the gateway), ``answer/`` (the answer page and its one-click
confirm pages, :mod:`._answer`), ``push/<id>`` (A2A push notifications, no hub
login, the task's secret), ``oauth_callback``, the landing page, and ``mock-agent/``
when on. State: a SQLite file in ``--state-dir`` unless ``HITL_NB_DB_URL`` names
another (PostgreSQL for several replicas: each process is one, see
:mod:`hitl_nb.gateway._replicas`); the cookie secret in the same folder, so a
restarted service keeps its users' browser sessions (replicas behind one load balancer
share ``HITL_NB_COOKIE_SECRET``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import secrets
import signal
import sys
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import tornado.httpserver
import tornado.web

from hitl_nb.gateway import (
    PUSH_PATH,
    AgentPool,
    ConfirmDesk,
    Gateway,
    GatewayAPI,
    InternalCaller,
    Notifier,
    StoreUnavailable,
    open_store,
    push_handlers,
    slack_handlers,
)
from hitl_nb.hub._answer import ANSWER_PATH, answer_handlers
from hitl_nb.hub._handlers import api_handlers, hosted_handlers, metrics_handlers, page_handlers
from hitl_nb.hub._options import ServiceOptions, options_from

__all__ = ["HubService", "access_scopes", "main", "serve"]

log = logging.getLogger("hitl_nb.hub")

MOCK_AGENT = "mock-agent"


def _env(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name, "")
    if not value:
        raise SystemExit(
            f"hitl-nb hub-service: {name} is not set. This command is started by JupyterHub "
            "(configure it in jupyterhub_config.py: from hitl_nb.hub import configure; "
            "configure(c))."
        )
    return value


def _cookie_secret(options: ServiceOptions, environ: Mapping[str, str]) -> bytes:
    given = environ.get("HITL_NB_COOKIE_SECRET")
    if given:
        return bytes.fromhex(given)
    path = options.state_dir / "cookie_secret"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    return bytes.fromhex(path.read_text().strip())


def access_scopes(name: str, environ: Mapping[str, str]) -> set[str]:
    """The scopes a request's credentials must carry: the hub's word for this service
    (``JUPYTERHUB_OAUTH_ACCESS_SCOPES``), else ``access:services!service=<name>``. Never
    empty: HubOAuth lets any hub user in when there are none to check."""
    given = environ.get("JUPYTERHUB_OAUTH_ACCESS_SCOPES")
    scopes = {str(s) for s in json.loads(given)} if given else set()
    return scopes or {f"access:services!service={name}"}


class HubService:
    """The service: one :class:`~hitl_nb.gateway.Gateway` behind the hub's login.

    ``environ`` is the hub's environment for the service (``os.environ`` when run by the
    hub). :meth:`start` listens and resumes the gateway's work; :meth:`stop` ends both.
    """

    def __init__(self, options: ServiceOptions, environ: Mapping[str, str] | None = None) -> None:
        from jupyterhub.services.auth import HubOAuth

        env = os.environ if environ is None else environ
        self.options = options
        self.name = env.get("JUPYTERHUB_SERVICE_NAME") or "hitl"
        self.url = options.settings.listen or _env(env, "JUPYTERHUB_SERVICE_URL")
        prefix = env.get("JUPYTERHUB_SERVICE_PREFIX") or f"/services/{self.name}/"
        self.prefix = prefix if prefix.endswith("/") else prefix + "/"
        options.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.auth = HubOAuth(
            api_token=_env(env, "JUPYTERHUB_API_TOKEN"),
            api_url=_env(env, "JUPYTERHUB_API_URL"),
            oauth_client_id=_env(env, "JUPYTERHUB_CLIENT_ID"),
            base_url=self.prefix,
            cache_max_age=options.settings.cache_max_age,
            access_scopes=access_scopes(self.name, env),
        )
        bind = urlsplit(self.url)
        self.host = bind.hostname or "127.0.0.1"
        self.port = bind.port or 80
        public = (
            options.push_url
            or env.get("JUPYTERHUB_PUBLIC_URL")
            or (self.url.rstrip("/") + self.prefix)
        )
        self.public_url = public if public.endswith("/") else public + "/"
        handlers: list[tuple[str, type, dict[str, Any]]] = []
        internal = None
        settings = options.settings
        if options.mock_agent:
            mount = self.prefix + MOCK_AGENT
            internal = InternalCaller(self.port, mount)
            from hitl_nb.mock_agent import mock_agent_handlers

            agent = mock_agent_handlers(mount, store=options.state_dir / "mock-agent.sqlite")
            handlers += hosted_handlers(agent, self.auth, internal)
        pool = AgentPool(
            settings.allowed_agent_hosts,
            settings.agent_timeout,
            internal,
            streams=settings.max_streams,
        )
        notify = self._notify(env) if settings.notifying else None
        self.gateway = Gateway(
            open_store(options.db_url, options.state_dir), pool, settings, notify=notify
        )
        if settings.push:
            self.gateway.push_url = lambda reg_id: f"{self.public_url}{PUSH_PATH}/{reg_id}"
            handlers += push_handlers(self.prefix, self.gateway.push)
        # A Slack app's clicks (when a team channel is one): signed by Slack, no hub login.
        handlers += slack_handlers(self.prefix, self.gateway)
        handlers += api_handlers(self.prefix + "api", GatewayAPI(self.gateway), self.auth)
        handlers += page_handlers(self.prefix, self.auth)
        handlers += metrics_handlers(self.prefix, self.gateway, self.auth)
        # The answer page: served here, behind the hub's login; nobody's server starts.
        desk = ConfirmDesk(self.gateway, self.prefix + ANSWER_PATH)
        handlers += answer_handlers(self.prefix, desk, self.auth)
        self.app = tornado.web.Application(
            handlers,
            cookie_secret=_cookie_secret(options, env),
            # The hub's XSRF rules apply where a cookie is believed (hitl_nb.hub._auth).
            xsrf_cookies=False,
        )
        self._server: tornado.httpserver.HTTPServer | None = None

    def _notify(self, env: Mapping[str, str]) -> Callable[[Gateway], Notifier]:
        """How the gateway's notifier is made: links through the hub's public address
        (``user-redirect``), the hub's users asked with the service's token."""
        from hitl_nb.notify import HubDirectory

        settings = self.options.settings
        link = settings.notify_link_url
        if not link:
            hub_url = env.get("JUPYTERHUB_PUBLIC_HUB_URL") or ""
            link = hub_url.rstrip("/").removesuffix("/hub") + "/" if hub_url else ""
        if not link:
            raise SystemExit(
                "hitl-nb hub-service: notifications need the address people open their "
                "links at: set c.JupyterHub.public_url, or notify link_url in configure()"
            )
        directory = HubDirectory(
            _env(env, "JUPYTERHUB_API_URL"),
            _env(env, "JUPYTERHUB_API_TOKEN"),
            email_key=settings.notify_email_key or None,
        )

        def make(gateway: Gateway) -> Notifier:
            return Notifier(
                settings,
                gateway.store,
                lambda: link,
                hub=True,
                directory=directory,
                owner=gateway.replica,
                page=self.prefix.lstrip("/") + ANSWER_PATH,
            )

        return make

    @property
    def base_url(self) -> str:
        """The service's own URL with its prefix (``http://127.0.0.1:10101/services/hitl/``)."""
        return self.url.rstrip("/") + self.prefix

    async def start(self) -> None:
        """Listen on the service's URL and resume timers, forwards and watching."""
        self._server = self.app.listen(self.port, address=self.host, xheaders=False)
        await self.gateway.start()
        log.info(
            "hitl-nb hub service %r on %s%s (agents push to %s)",
            self.name,
            self.url,
            self.prefix,
            self.public_url,
        )

    async def stop(self) -> None:
        """Stop listening; close the gateway (its store, connections, timers)."""
        if self._server is not None:
            self._server.stop()
            await self._server.close_all_connections()
        await self.gateway.close()


async def serve(options: ServiceOptions) -> None:
    """Run the service until SIGTERM or SIGINT (the hub stops it with SIGTERM)."""
    service = HubService(options)
    try:
        await service.start()
    except StoreUnavailable as exc:
        # The hub starts a managed service again; say why this start failed.
        await service.stop()
        raise SystemExit(f"hitl-nb hub-service: cannot start: {exc}") from None
    # The cycle collector, tuned for a server (about 4% of the CPU per answer in
    # benchmarks/bench_scale.py): what the start made (modules, the app, the settings)
    # lives as long as the process, so it is moved out of the collector's sight and a full
    # collection goes over what requests made, not over it again each time; and the
    # youngest objects are looked at after 10,000 allocations, not 700 (a request makes
    # a few thousand, nearly all freed by their reference counts, so most of those
    # collections found nothing to free).
    gc.freeze()
    gc.set_threshold(10_000, *gc.get_threshold()[1:])
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    log.info("hitl-nb hub service stopping")
    await service.stop()


def main(args: argparse.Namespace) -> int:
    """``hitl-nb hub-service``: log to stderr (the hub keeps it in its log), serve."""
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="[%(levelname).1s %(asctime)s %(name)s] %(message)s",
    )
    # httpx says every request it sends and psycopg's pool every connection it lends, at
    # INFO: a line or two per answer in the hub's log, and a share of its CPU.
    for chatty in ("httpx", "httpcore", "psycopg.pool"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    asyncio.run(serve(options_from(args)))
    return 0
