"""The extension's settings, as traitlets (``c.HitlServer.<name> = ...`` in a config file).

An administrator sets them in ``jupyter_server_config.py`` or on the command line
(``--HitlServer.mock_agent=False``).
"""

from __future__ import annotations

from traitlets import Bool, Float, Int, List, Unicode
from traitlets.config import Configurable

from hitl_nb.gateway import GatewaySettings

__all__ = ["HitlServer"]


class HitlServer(Configurable):
    """Settings of the hitl-nb server extension."""

    mock_agent = Bool(
        True,
        help="Host the bundled mock agent under {base_url}hitl/mock-agent/.",
    ).tag(config=True)

    state_dir = Unicode(
        "",
        help=(
            "Directory of the extension's SQLite files (gateway state, the hosted mock "
            "agent's tasks). Default: the 'hitl_nb' folder in the server's data directory."
        ),
    ).tag(config=True)

    allowed_agent_hosts = List(
        Unicode(),
        default_value=[],
        help=(
            "Host names (or patterns like '*.example.org', 'host:port') of agents users "
            "may register with the gateway. Empty: any host. Requests to a host not on "
            "the list, including interfaces named by an agent's card, are refused."
        ),
    ).tag(config=True)

    max_registrations = Int(
        1000,
        help="At most this many registered tasks (across all users).",
    ).tag(config=True)

    accept_after_deadline = Bool(
        False,
        help=(
            "Forward answers that arrive after a prompt's deadline. Off: the gateway's own "
            "timer (spec S-4) closes the prompt at its deadline and later answers get 410."
        ),
    ).tag(config=True)

    watch = Bool(
        True,
        help="Watch registered tasks (subscribe or poll) so new prompts appear unasked.",
    ).tag(config=True)

    poll_interval = Float(
        10.0,
        help="Seconds between two reads of a task that is polled, not streamed.",
    ).tag(config=True)

    max_streams = Int(
        20,
        help="At most this many open subscriptions to agents; other tasks are polled.",
    ).tag(config=True)

    push = Bool(
        True,
        help=(
            "Ask agents whose card advertises push notifications to POST each update of a "
            "registered task to {push_base_url}hitl/push/<id> (A2A push). The agents must "
            "be able to reach that URL; tasks whose agent does not push are watched as before."
        ),
    ).tag(config=True)

    push_base_url = Unicode(
        "",
        help=(
            "This server's base URL as agents reach it, e.g. 'https://hub.example.org/user/"
            "alice/' (with the base_url path). Default: the server's own connection URL, "
            "which only agents on the same host or network can reach."
        ),
    ).tag(config=True)

    max_push_bytes = Int(
        1024 * 1024,
        help="The largest push notification accepted, in bytes (larger ones get 413).",
    ).tag(config=True)

    agent_timeout = Float(
        30.0,
        help="Seconds the gateway waits for an agent's answer to one request.",
    ).tag(config=True)

    def gateway_settings(self) -> GatewaySettings:
        """The gateway's settings from these (every user of the server sees every prompt:
        they share the server, its files and kernels anyway)."""
        return GatewaySettings(
            allowed_agent_hosts=list(self.allowed_agent_hosts),
            max_registrations=self.max_registrations,
            accept_after_deadline=self.accept_after_deadline,
            watch=self.watch,
            poll_interval=self.poll_interval,
            max_streams=self.max_streams,
            push=self.push,
            max_push_bytes=self.max_push_bytes,
            agent_timeout=self.agent_timeout,
            show_all=True,
            where="this server",
        )
