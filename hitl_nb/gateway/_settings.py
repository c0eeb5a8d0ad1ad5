"""What an administrator decides about a gateway, declared once for both hosts.

:class:`GatewaySettings` is a traitlets ``Configurable``, as JupyterHub's own classes
are: each setting is one trait, with its default and its help, and both hosts read the
same declaration:

- the Jupyter server extension as ``c.HitlServer.<name>`` (:class:`hitl_nb.server.HitlServer`
  is this class with the server's own settings added);
- the hub service as ``hitl-nb hub-service --<name-with-dashes>``
  (:class:`hitl_nb.hub.HubSettings` adds the service's own; its command line is built
  from the traits by :mod:`hitl_nb.hub._options`, and :func:`hitl_nb.hub.configure`
  writes it from keyword arguments of the same names).

docs/server.md's settings table is this declaration, row for row
(``tests/gateway/test_settings.py`` holds it to that). A new setting is one trait
tagged ``config=True`` here (or in one host's class, when only that host has it): it
then appears in ``c.HitlServer``, among the hub's flags and, once the test has shown the
table's new row, in the docs. A ``List`` is given on the hub's command line one item per
flag, named in the singular (``--allowed-agent-host``); a ``Bool`` as ``--name`` and
``--no-name``. Nothing secret is a setting: a command line is shown to whoever may read
the hub's services (the database URL and the cookie secret come from the environment).

A setting whose value is a credential (a team's webhook URLs: their path is their
key) is tagged ``environment="NAME"``: on a hub it never goes on the command line but
into the service's environment under that name, as JSON (:func:`hitl_nb.hub.configure`
writes it; the service reads it). A password is never a setting at all: the settings
name where it is (``notify_smtp_password_env``, ``notify_smtp_password_file``).

Two traits are not settings but facts of the host, set by the host's class:
``show_all`` and ``where``.
"""

from __future__ import annotations

import math
from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode
from traitlets.config import Configurable

__all__ = ["GatewaySettings", "Seconds"]


class Seconds(Float):  # type: ignore[type-arg]
    """A duration in seconds: a finite number from ``low`` to ``high`` (NaN refused)."""

    info_text = "a number of seconds"

    def __init__(
        self, default_value: float, *, low: float, high: float = math.inf, **kwargs: Any
    ) -> None:
        super().__init__(default_value, **kwargs)
        self.low, self.high = low, high

    def validate(self, obj: Any, value: Any) -> float:
        seconds = float(super().validate(obj, value))
        if not (math.isfinite(seconds) and self.low <= seconds <= self.high):
            bounds = f"from {self.low:g} to {self.high:g}"
            if not math.isfinite(self.high):
                bounds = f"of at least {self.low:g}"
            raise TraitError(f"{self.name}: give seconds {bounds}, not {value!r}")
        return seconds


class GatewaySettings(Configurable):
    """A gateway's settings, whichever host runs it (the module docstring says how)."""

    allowed_agent_hosts = List(
        Unicode(),
        default_value=[],
        help=(
            "Host names (or patterns like '*.example.org', 'host:port') of agents users may "
            "register with the gateway. Empty: any host. Requests to a host not on the list, "
            "including interfaces named by an agent's card, are refused."
        ),
    ).tag(config=True)

    # Counted over every task ever registered (registrations are kept for the audit
    # trail): 10,000 lets a team's hub run for a long while; the store is measured at
    # 10,000 open prompts (benchmarks/bench_scale.py), so a server can afford it too.
    max_registrations = Int(
        10_000,
        min=0,
        help="At most this many registered tasks (across all users); more are refused (429).",
    ).tag(config=True)

    accept_after_deadline = Bool(
        False,
        help=(
            "Forward answers that arrive after a prompt's deadline. Off: the gateway's own "
            "timer (spec S-4) closes the prompt at its deadline and later answers get 410."
        ),
    ).tag(config=True)

    deadline_policy = Enum(
        ["remind", "cancel"],
        "remind",
        help=(
            "What happens at a prompt's deadline when its task's registration chose "
            "nothing: 'remind' closes the prompt and tells the registrant; 'cancel' also "
            "cancels the task (A2A CancelTask). Registrants may choose within "
            "deadline_policies_allowed (docs/hub.md, deadline policies)."
        ),
    ).tag(config=True)

    deadline_policies_allowed = List(
        Enum(["remind", "escalate", "default", "cancel"]),
        default_value=["remind", "escalate", "default", "cancel"],
        help=(
            "The deadline policies a registrant may choose for their task: 'remind', "
            "'escalate' (tell named people or a team channel before the deadline), "
            "'default' (send the answer they gave at registration) and 'cancel'. Others "
            "are refused (422)."
        ),
    ).tag(config=True)

    two_person_rule = Bool(
        False,
        help=(
            "The two-person rule for every registered task: whoever registered a task "
            "cannot answer its prompts alone. A prompt for one answer ('any', "
            "'specific:<id>') refuses the registrant's answer (403, saying why); a "
            "'consensus:N' prompt needs N people other than the registrant. Off: a "
            "registrant may still turn the rule on for their own task "
            '(POST api/tasks {"two_person": true}).'
        ),
    ).tag(config=True)

    watch = Bool(
        True,
        help="Watch registered tasks (subscribe or poll) so new prompts appear unasked.",
    ).tag(config=True)

    poll_interval = Seconds(
        10.0,
        low=0.05,
        help="Seconds between two reads of a task that is polled, not streamed.",
    ).tag(config=True)

    max_streams = Int(
        20,
        min=0,
        help="At most this many open subscriptions to agents; other tasks are polled.",
    ).tag(config=True)

    push = Bool(
        True,
        help=(
            "Ask agents whose card advertises push notifications to POST each update of a "
            "registered task to this host (A2A push). The agents must be able to reach it; "
            "tasks whose agent does not push are watched as before."
        ),
    ).tag(config=True)

    max_push_bytes = Int(
        1024 * 1024,
        min=1,
        help="The largest push notification accepted, in bytes (larger ones get 413).",
    ).tag(config=True)

    agent_timeout = Seconds(
        30.0,
        low=0.05,
        help="Seconds the gateway waits for an agent's answer to one request.",
    ).tag(config=True)

    lease_seconds = Seconds(
        15.0,
        low=0.5,
        high=3600.0,
        help=(
            "Replicas on one database: a replica that stops renewing its leases (it died) "
            "loses its watched tasks and forwards in doubt to the others after this many "
            "seconds; each replica's rounds run every third of it."
        ),
    ).tag(config=True)

    traces = Bool(
        True,
        help=(
            "Trace each prompt and its answer's forward with OpenTelemetry (the extra "
            "hitl-nb[otel]; spans go to the exporter configured for the process). Off, or "
            "without the extra: nothing is traced."
        ),
    ).tag(config=True)

    mock_agent = Bool(
        True,
        help=(
            "Serve the bundled mock agent behind the host's login: {base_url}hitl/mock-agent/ "
            "on a Jupyter server, {hub}/services/hitl/mock-agent/ on the hub service."
        ),
    ).tag(config=True)

    state_dir = Unicode(
        "",
        help=(
            "Folder of the SQLite files (the gateway's state, the hosted mock agent's tasks; "
            "the hub service's cookie secret). Default: 'hitl_nb' in a Jupyter server's "
            "data directory; 'hitl-state' in the hub service's working directory."
        ),
    ).tag(config=True)

    # -- notifications (docs/notify.md) ------------------------------------------------

    notify_smtp_host = Unicode(
        "",
        help=(
            "Notifications by email: the SMTP server's host name. Empty: no email is sent "
            "(people may still have their own webhooks; teams theirs)."
        ),
    ).tag(config=True)

    notify_smtp_port = Int(587, min=1, max=65535, help="The SMTP server's port.").tag(config=True)

    notify_smtp_security = Enum(
        ["starttls", "tls", "none"],
        "starttls",
        help=(
            "How the SMTP connection is protected: 'starttls' (port 587), 'tls' (TLS from "
            "the first byte, port 465) or 'none' (only for a server on this machine). The "
            "server's certificate is always checked."
        ),
    ).tag(config=True)

    notify_smtp_user = Unicode("", help="The SMTP login's user name (empty: no login).").tag(
        config=True
    )

    notify_smtp_password_env = Unicode(
        "",
        help=(
            "The name of the environment variable that holds the SMTP password (the "
            "password itself is never a setting)."
        ),
    ).tag(config=True)

    notify_smtp_password_file = Unicode(
        "", help="A file that holds the SMTP password (read at each connection)."
    ).tag(config=True)

    notify_smtp_ca_file = Unicode(
        "", help="CA certificates (PEM) the SMTP server's certificate is checked against."
    ).tag(config=True)

    notify_from = Unicode(
        "", help="The address notification emails come from, e.g. hitl@example.org."
    ).tag(config=True)

    notify_team_webhooks = Dict(
        default_value={},
        help=(
            "Team channels for prompts anyone may answer: agent host (or '*' for every "
            "other) -> a Slack-compatible incoming webhook's URL, 'teams:' and the URL for "
            "a Microsoft Teams workflow, or {'url': ..., 'secret_env': NAME} (or "
            "'secret_file') for a signed JSON webhook. A URL is a credential: on a hub it "
            "comes through the service's environment, never its command line."
        ),
    ).tag(config=True, environment="HITL_NB_NOTIFY_TEAM_WEBHOOKS")

    notify_webhook_hosts = List(
        Unicode(),
        default_value=[],
        help=(
            "Hosts people's own webhooks may point at ('hooks.slack.com', "
            "'*.logic.azure.com' for Teams workflows, '*.example.org', "
            "'chat.example.org:8065', 'http://mattermost.lan' for plain http). Empty: "
            "nobody may set a webhook of their own."
        ),
    ).tag(config=True)

    notify_addresses = Dict(
        default_value={},
        help="People's email addresses by user name (asked before the template).",
    ).tag(config=True)

    notify_address_template = Unicode(
        "",
        help=(
            "People's email addresses made from their user names, e.g. "
            "'{name}@example.org' ('{name}' alone: the user names are addresses)."
        ),
    ).tag(config=True)

    notify_remind_before = Seconds(
        600.0,
        low=0.0,
        high=30 * 86400.0,
        help=(
            "Remind whoever has not answered this many seconds before a prompt's "
            "deadline (0: no reminders)."
        ),
    ).tag(config=True)

    notify_every = Seconds(
        60.0,
        low=0.0,
        high=86400.0,
        help=(
            "At most one message per person (or team channel) in this many seconds; what "
            "comes meanwhile goes as one digest."
        ),
    ).tag(config=True)

    notify_link_url = Unicode(
        "",
        help=(
            "The address people open notifications' links at: the hub's public URL "
            "(https://hub.example.org/), or a single server's own. Default: the hub's "
            "public URL when the hub has one (c.JupyterHub.public_url), else the server's."
        ),
    ).tag(config=True)

    notify_answer_links = Enum(
        ["page", "lab"],
        "page",
        help=(
            "Where messages' links open: 'page', the answer page the host serves itself "
            "(no Jupyter server started on a hub, made for a phone too; one-choice prompts "
            "get a link per choice in emails, each to a confirm page), or 'lab', the "
            "prompt's card in the reader's JupyterLab (on a hub through user-redirect, "
            "which starts their server)."
        ),
    ).tag(config=True)

    notify_slack_token_env = Unicode(
        "",
        help=(
            "A Slack app (a team channel {'kind': 'slack-app', 'channel': 'C0123ABCD'}): "
            "the environment variable that holds its bot token (xoxb-...; never a setting "
            "itself)."
        ),
    ).tag(config=True)

    notify_slack_token_file = Unicode(
        "", help="A file that holds the Slack app's bot token (read at each use)."
    ).tag(config=True)

    notify_slack_signing_secret_env = Unicode(
        "",
        help=(
            "The environment variable that holds the Slack app's signing secret: its "
            "buttons' clicks (POST .../slack/interactions) are checked with it."
        ),
    ).tag(config=True)

    notify_slack_signing_secret_file = Unicode(
        "", help="A file that holds the Slack app's signing secret (read at each request)."
    ).tag(config=True)

    notify_slack_api_url = Unicode(
        "https://slack.com/api/",
        help="Slack's Web API (another only for a test's or a proxy's).",
    ).tag(config=True)

    notify_slack_users = Dict(
        default_value={},
        help=(
            "Who a Slack user is here: Slack user id -> user name ({'U0123ABCD': 'bob'}). "
            "A Slack user answers only once mapped to a user (here, or by email below)."
        ),
    ).tag(config=True)

    notify_slack_match_email = Bool(
        False,
        help=(
            "Also map a Slack user by their email (users.info, the app's scope "
            "users:read.email) to the user whose address is the same (notify_addresses, "
            "the template, the hub's auth state)."
        ),
    ).tag(config=True)

    @property
    def notifying(self) -> bool:
        """Are notifications on: some channel set (email, a team's, people's own)?"""
        return bool(self.notify_smtp_host or self.notify_team_webhooks or self.notify_webhook_hosts)

    # -- facts of the host, not settings ------------------------------------------------

    #: Every caller sees every open prompt (a Jupyter server, whose users share the
    #: server anyway). Off (the hub): a caller sees the prompts they may answer, those of
    #: tasks they registered, and, hub admins, all.
    show_all = Bool(True)
    #: What the host is called in messages ("this server", "this hub").
    where = Unicode("this server")
