"""The responder gateway (spec S-3), once, for every host that runs it.

The orchestrator's side of hitl-prompt/v1 for people who answer from Jupyter: it
watches registered tasks, lists their prompts, checks who may answer against the
identity its host vouches for, collects consensus answers, forwards one answer per
prompt at most once, keeps its own deadline timers (S-4), receives A2A push
notifications, and keeps an audit trail. Two hosts run it:

- :mod:`hitl_nb.server`, the Jupyter server extension (``{base_url}hitl/api/``), where
  the server's IdentityProvider names the caller;
- :mod:`hitl_nb.hub`, a JupyterHub service (``{hub}/services/hitl/api/``) for every
  user of a hub, where the hub names the caller.

A host builds a :class:`Gateway` over a :class:`GatewayStore` (:func:`open_store`: a
SQLite file, or PostgreSQL for several replicas on one database; psycopg comes with the
``hub`` extra and is loaded only then), an :class:`AgentPool` and
:class:`GatewaySettings`, routes requests to :class:`GatewayAPI` with the
:class:`Caller` it authenticated, and mounts :func:`push_handlers`. :attr:`Gateway.feed`
follows the open prompts each person may answer; hosts serve it as server-sent events
(:class:`FeedStream`).

This ``__init__`` exports what the hosts and other packages use; the rest (the stores'
classes and rows, the feed's parts) is reached in its own module by the gateway and its
tests.
"""

from __future__ import annotations

from hitl_nb.gateway._agents import GATEWAY_HEADER, AgentPool, InternalCaller
from hitl_nb.gateway._api import MAX_REQUEST_BYTES, ApiRequest, GatewayAPI
from hitl_nb.gateway._audit_cli import register_cli as register_audit_cli
from hitl_nb.gateway._confirm import ConfirmDesk, PageReply, send_page
from hitl_nb.gateway._db_url import check_db_url, open_store
from hitl_nb.gateway._feed import (
    FeedChange,
)
from hitl_nb.gateway._feed_route import FeedStream
from hitl_nb.gateway._forward import message_for
from hitl_nb.gateway._gateway import Gateway, GatewayError
from hitl_nb.gateway._metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from hitl_nb.gateway._notify import Notifier
from hitl_nb.gateway._page import (
    PageConfig,
    StaticFiles,
    page_routes,
    shell,
)
from hitl_nb.gateway._push import PUSH_PATH, Refused
from hitl_nb.gateway._push_http import push_handlers
from hitl_nb.gateway._settings import GatewaySettings, Seconds
from hitl_nb.gateway._slack_http import slack_handlers
from hitl_nb.gateway._store import (
    Forward,
    GatewayStore,
    StoreUnavailable,
)
from hitl_nb.gateway._views import Caller, PromptItem, PromptState

__all__ = [
    "GATEWAY_HEADER",
    "METRICS_CONTENT_TYPE",
    "MAX_REQUEST_BYTES",
    "PUSH_PATH",
    "AgentPool",
    "ApiRequest",
    "Caller",
    "ConfirmDesk",
    "FeedChange",
    "FeedStream",
    "Forward",
    "Gateway",
    "GatewayAPI",
    "GatewayError",
    "GatewaySettings",
    "GatewayStore",
    "InternalCaller",
    "Notifier",
    "PageConfig",
    "PageReply",
    "PromptItem",
    "PromptState",
    "Refused",
    "Seconds",
    "StaticFiles",
    "StoreUnavailable",
    "check_db_url",
    "message_for",
    "open_store",
    "page_routes",
    "push_handlers",
    "register_audit_cli",
    "send_page",
    "shell",
    "slack_handlers",
]
