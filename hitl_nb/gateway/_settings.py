"""What an administrator decides about a gateway, whichever host runs it.

The Jupyter server extension fills these from ``c.HitlServer`` (traitlets), the hub
service from its command line (written by :func:`hitl_nb.hub.configure`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GatewaySettings"]


@dataclass
class GatewaySettings:
    """A gateway's settings (see :class:`hitl_nb.server.HitlServer` for each one's help).

    ``show_all``: every caller sees every open prompt (a Jupyter server, whose users
    share the server anyway). Off (the hub): a caller sees the prompts they may answer,
    those of tasks they registered, and, hub admins, all.
    """

    allowed_agent_hosts: list[str] = field(default_factory=list)
    max_registrations: int = 1000
    accept_after_deadline: bool = False
    watch: bool = True
    poll_interval: float = 10.0
    max_streams: int = 20
    push: bool = True
    max_push_bytes: int = 1024 * 1024
    agent_timeout: float = 30.0
    show_all: bool = True
    #: What the host is called in messages ("this server", "this hub").
    where: str = "this server"
    #: Replicas on one database: a replica that stops renewing its leases (it died)
    #: loses them after this many seconds; rounds run every third of it.
    lease_seconds: float = 15.0
