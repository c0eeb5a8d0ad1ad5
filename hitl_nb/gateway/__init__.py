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
:class:`SQLiteStore` file, or :class:`PostgresStore` for several replicas on one
database), an :class:`AgentPool` and :class:`GatewaySettings`, routes requests to
:class:`GatewayAPI` with the :class:`Caller` it authenticated, and mounts
:func:`push_handlers`. ``PostgresStore`` is loaded on first use (psycopg comes with the
``hub`` extra). :attr:`Gateway.feed` (a :class:`PromptFeed`) follows the open prompts
each person may answer; hosts serve it as server-sent events (:func:`sse_frames`).
"""

from __future__ import annotations

import typing

from hitl_nb import _lazy
from hitl_nb.gateway._agents import GATEWAY_HEADER, AgentPool, InternalCaller, check_agent_url
from hitl_nb.gateway._api import MAX_REQUEST_BYTES, ApiReply, ApiRequest, GatewayAPI
from hitl_nb.gateway._confirm import ConfirmDesk, PageReply
from hitl_nb.gateway._db_url import check_db_url, open_store, sqlite_path
from hitl_nb.gateway._feed import (
    FEED_LIMIT,
    PING,
    FeedChange,
    FeedFull,
    FeedScope,
    PromptFeed,
    serve_feed,
    sse_frames,
)
from hitl_nb.gateway._feed_route import FeedStream
from hitl_nb.gateway._forward import GatewayReply, message_for
from hitl_nb.gateway._gateway import Gateway, GatewayError
from hitl_nb.gateway._notify import Notifier, team_channels
from hitl_nb.gateway._outbox import NotifyChoice, StoreOutbox
from hitl_nb.gateway._page import (
    CSP,
    PAGE_HEADERS,
    STATIC_DIR,
    PageConfig,
    StaticFiles,
    page_routes,
    script_json,
    shell,
)
from hitl_nb.gateway._push import PUSH_PATH, PushDesk, Refused
from hitl_nb.gateway._push_http import push_handlers
from hitl_nb.gateway._schema import SCHEMA_VERSION
from hitl_nb.gateway._settings import GatewaySettings, Seconds
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import (
    AuditEntry,
    Ballot,
    Forward,
    GatewayStore,
    Listed,
    OpenQuery,
    PromptRow,
    Registration,
    StoreUnavailable,
)
from hitl_nb.gateway._views import NO_NAMES, PROMPT_CUT, Caller, PromptItem, PromptState

if typing.TYPE_CHECKING:  # loaded on first use at run time (PEP 562)
    from hitl_nb.gateway._postgres import PostgresStore

__all__ = [
    "CSP",
    "FEED_LIMIT",
    "GATEWAY_HEADER",
    "MAX_REQUEST_BYTES",
    "NO_NAMES",
    "PAGE_HEADERS",
    "PING",
    "PROMPT_CUT",
    "PUSH_PATH",
    "SCHEMA_VERSION",
    "STATIC_DIR",
    "AgentPool",
    "ApiReply",
    "ApiRequest",
    "AuditEntry",
    "Ballot",
    "Caller",
    "ConfirmDesk",
    "FeedChange",
    "FeedFull",
    "FeedScope",
    "FeedStream",
    "Forward",
    "Gateway",
    "GatewayAPI",
    "GatewayError",
    "GatewayReply",
    "GatewaySettings",
    "GatewayStore",
    "InternalCaller",
    "Listed",
    "Notifier",
    "NotifyChoice",
    "OpenQuery",
    "PageConfig",
    "PageReply",
    "PostgresStore",
    "PromptFeed",
    "PromptItem",
    "PromptRow",
    "PromptState",
    "PushDesk",
    "Refused",
    "Registration",
    "SQLiteStore",
    "Seconds",
    "StaticFiles",
    "StoreOutbox",
    "StoreUnavailable",
    "check_agent_url",
    "check_db_url",
    "message_for",
    "open_store",
    "page_routes",
    "push_handlers",
    "script_json",
    "serve_feed",
    "shell",
    "sqlite_path",
    "sse_frames",
    "team_channels",
]

__getattr__, __dir__ = _lazy.attach(__name__, {"PostgresStore": "_postgres"})
