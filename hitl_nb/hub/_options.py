"""``hitl-nb hub-service``'s options: what the administrator decides, on the command line.

:func:`hitl_nb.hub.configure` writes them into the service's command; the hub starts
it. Secrets never come this way (the hub shows a service's command to those who may read
it): the database URL comes from ``HITL_NB_DB_URL``, the cookie secret from
``HITL_NB_COOKIE_SECRET`` or a file in the state folder. Nothing here imports JupyterHub,
so ``hitl-nb --help`` works where it is not installed.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hitl_nb.gateway import GatewaySettings

__all__ = ["COMMAND", "ServiceOptions", "options_from", "register_cli"]

#: The subcommand of ``hitl-nb`` that runs the service.
COMMAND = "hub-service"


@dataclass
class ServiceOptions:
    """What the administrator decided (:func:`options_from` reads the command line)."""

    state_dir: Path
    db_url: str | None = None
    settings: GatewaySettings = field(default_factory=GatewaySettings)
    push_url: str | None = None
    mock_agent: bool = True
    cache_max_age: int = 60
    listen: str | None = None


def options_from(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> ServiceOptions:
    """The service's options from its command line (and ``HITL_NB_DB_URL``)."""
    env = os.environ if environ is None else environ
    settings = GatewaySettings(
        allowed_agent_hosts=list(args.allowed_agent_host or []),
        max_registrations=args.max_registrations,
        accept_after_deadline=args.accept_after_deadline,
        poll_interval=args.poll_interval,
        max_streams=args.max_streams,
        push=args.push,
        agent_timeout=args.agent_timeout,
        lease_seconds=args.lease_seconds,
        show_all=False,
        where="this hub",
    )
    return ServiceOptions(
        state_dir=Path(args.state_dir).resolve(),
        db_url=env.get("HITL_NB_DB_URL") or None,
        settings=settings,
        push_url=args.push_url,
        mock_agent=args.mock_agent,
        cache_max_age=args.cache_max_age,
        listen=args.listen,
    )


def _positive(text: str) -> float:
    value = float(text)
    if not 0.5 <= value <= 3600:  # also refuses NaN
        raise argparse.ArgumentTypeError("give seconds from 0.5 to 3600")
    return value


def register_cli(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    run: Callable[[argparse.Namespace], int],
) -> None:
    """Add ``hitl-nb hub-service`` to the command's parser; ``run`` runs it."""
    p = sub.add_parser(
        COMMAND,
        help="run the responder gateway as a JupyterHub service (started by the hub)",
        description="The responder gateway for every user of a JupyterHub: started by the "
        "hub as a managed service (from hitl_nb.hub import configure; configure(c) in "
        "jupyterhub_config.py writes its entry). The database URL comes from HITL_NB_DB_URL.",
    )
    p.add_argument(
        "--state-dir",
        default="hitl-state",
        help="folder of the SQLite file, the mock agent's tasks and the cookie secret",
    )
    p.add_argument(
        "--allowed-agent-host",
        action="append",
        metavar="HOST",
        help="a host (or '*.example.org', 'host:port') users may register agents "
        "of; repeat it; none: any host",
    )
    p.add_argument(
        "--push-url",
        help="the service's URL as agents reach it, e.g. "
        "https://hub.example.org/services/hitl/ (default: the hub's public URL "
        "when it has one, else the service's own)",
    )
    p.add_argument(
        "--no-push",
        dest="push",
        action="store_false",
        help="never ask agents to push (watch by streaming and polling only)",
    )
    p.add_argument(
        "--no-mock-agent",
        dest="mock_agent",
        action="store_false",
        help="do not serve the bundled mock agent under mock-agent/",
    )
    p.add_argument(
        "--poll-interval",
        type=float,
        default=10.0,
        help="seconds between two reads of a task that is polled (default 10)",
    )
    p.add_argument(
        "--max-streams",
        type=int,
        default=20,
        help="at most this many open subscriptions to agents (default 20)",
    )
    p.add_argument(
        "--max-registrations",
        type=int,
        default=10_000,
        help="at most this many registered tasks, across users (default 10000)",
    )
    p.add_argument(
        "--accept-after-deadline",
        action="store_true",
        help="forward answers that arrive after a prompt's deadline",
    )
    p.add_argument(
        "--agent-timeout",
        type=float,
        default=30.0,
        help="seconds to wait for an agent's answer to one request (default 30)",
    )
    p.add_argument(
        "--cache-max-age",
        type=int,
        default=60,
        help="seconds the hub's word on a token is kept (default 60)",
    )
    p.add_argument(
        "--lease-seconds",
        type=_positive,
        default=15.0,
        help="replicas on one database: a replica that stops (dies) loses its watched "
        "tasks and forwards in doubt to the others after this many seconds (default 15)",
    )
    p.add_argument("--listen", help="listen here instead of JUPYTERHUB_SERVICE_URL")
    p.set_defaults(func=run)
