"""The kernel's side of a responder gateway (:mod:`hitl_nb.gateway`): a JupyterHub's
service, or the Jupyter server's own extension.

A kernel knows only what it is told about its user; the hub (or the Jupyter server that
started it) knows who is authenticated. Answers go through a gateway, which checks
``allowed_responders`` against the identity it vouches for (spec S-3) and forwards the
answer to the agent at most once.

:func:`find_gateway` discovers the gateway from facts, never by guessing a port:

1. ``HITL_NB_GATEWAY`` (a Jupyter server's URL, or a hub service's, with
   ``HITL_NB_GATEWAY_TOKEN``) when set: for kernels the server did not start itself (a
   remote kernel gateway, the reviewer page), set in the kernel spec's ``env``;
2. the hub's service, on a JupyterHub (``JUPYTERHUB_API_URL`` and the server's
   ``JUPYTERHUB_API_TOKEN`` in the kernel's environment): the hub's service list
   (``GET {hub api}/services/<name>``, ``<name>`` from ``HITL_NB_HUB_SERVICE``, default
   ``hitl``) gives its URL and prefix; it must answer ``GET api/me``. One gateway for
   every user of the hub, so a consensus among people with their own servers, and a
   ``specific:`` prompt for someone else, can be finished. A hub without the service
   (404), or a token that may not see it (403), goes on to 3;
3. otherwise the server that launched this kernel: jupyter-client puts the launching
   process id in ``JPY_PARENT_PID``; the kernel's connection file lives in that server's
   runtime directory, where the server keeps its ``jpserver-<pid>.json`` info file
   (url, base_url, token). The file whose ``pid`` is ``JPY_PARENT_PID`` is the one.
   The server must then list this kernel's id (from ``kernel-<id>.json``) in
   ``GET api/kernels``: proof that it really is this kernel's server; and it must answer
   ``GET hitl/api/me``: the extension is there.

Credentials: ``HITL_NB_GATEWAY_TOKEN`` when set (a person's own API token, e.g. on a
server shared by several people, each answering as themselves), else
``JUPYTERHUB_API_TOKEN`` under JupyterHub (the hub vouches for the user who owns the
server), else the token in the server's info file. With a plain token server
every request is "anonymous": such a gateway answers ``any`` prompts but refuses
``specific:`` and ``consensus:N`` ones, saying why, instead of guessing a name.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from hitl_nb._json import parse_json
from hitl_nb.errors import (
    AgentTimeout,
    AgentUnreachable,
    BadJSON,
    GatewayRefused,
    GatewayUnavailable,
    HitlError,
    ProtocolViolation,
    ResponseInvalid,
    error_for_status,
)

from ._clients import http_client, sync_http_client
from ._gateway_feed import FeedUpdate, read_feed

__all__ = [
    "GatewayAnswer",
    "GatewayClient",
    "GatewayInfo",
    "feed_of",
    "find_gateway",
    "find_prompt",
    "gateway_at",
    "kernel_server",
]

_API = "hitl/api"
#: The hub service's API, relative to its URL (``{hub}/services/hitl/``).
_HUB_API = "api"
_HUB_SERVICE = "hitl"
_TIMEOUT = 10.0
_MAX_ANSWER = 8 * 1024 * 1024
#: A listing of open prompts is read up to this size (1,000 prompts: about 2.5 MB).
_MAX_LISTING = 32 * 1024 * 1024
#: Seconds a feed may stay silent (the gateway pings every 15) before it is given up.
FEED_READ_TIMEOUT = 45.0
#: JSON nesting of a gateway's answer (an envelope's response_schema may nest 128 levels).
_MAX_DEPTH = 256


@dataclass(frozen=True)
class GatewayInfo:
    """Where a gateway is: its host's URL (a Jupyter server's base URL, or the hub
    service's URL, ending in ``/``), the token to send, how it was found (for messages
    and logs) and, for a hub service, the URL of its API (``api``; empty: a Jupyter
    server's ``{url}hitl/api/``)."""

    url: str
    token: str | None
    how: str
    api: str = ""

    @property
    def api_url(self) -> str:
        """The gateway's API root, ending in ``/``."""
        return self.api or self.url + _API + "/"

    @property
    def on_hub(self) -> bool:
        """True for a JupyterHub's service (one gateway for every user of the hub)."""
        return bool(self.api)

    def __repr__(self) -> str:  # never show the token
        return f"GatewayInfo(url={self.url!r}, how={self.how!r})"


@dataclass(frozen=True)
class GatewayAnswer:
    """What the gateway did with an answer.

    ``status`` is ``"forwarded"`` (the agent accepted it), ``"collecting"`` (a consensus
    prompt: ``agreeing`` of ``needed`` so far; ``disagreement`` when answers differ) or
    ``"forwarding"`` (the agent did not confirm; the gateway makes sure it lands once).
    """

    status: str
    message: str
    body: dict[str, Any]

    @property
    def agreeing(self) -> int | None:
        """Concurring answers so far (consensus prompts)."""
        value = self.body.get("agreeing")
        return value if isinstance(value, int) else None

    @property
    def answers(self) -> int:
        """Answers given so far, agreeing or not (consensus prompts; else 0)."""
        value = self.body.get("answers")
        return value if isinstance(value, int) else 0

    @property
    def responders(self) -> list[str]:
        """Who the forwarded answer is from (several for a consensus; may be empty)."""
        value = self.body.get("responders")
        return [str(r) for r in value] if isinstance(value, list) else []

    @property
    def needed(self) -> int | None:
        """Concurring answers needed (consensus prompts)."""
        value = self.body.get("needed")
        return value if isinstance(value, int) else None

    @property
    def disagreement(self) -> bool:
        """True when the answers given so far differ."""
        return bool(self.body.get("disagreement"))


def _connection_file() -> str | None:
    try:
        from ipykernel.connect import get_connection_file
    except ImportError:
        return None
    try:
        return str(get_connection_file())
    except Exception:  # not in a kernel
        return None


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"token {token}"} if token else {}


def _server_infos(runtime_dir: Path) -> list[dict[str, Any]]:
    infos = []
    for path in sorted(runtime_dir.glob("jpserver-*.json")):
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(info, dict):
            infos.append(info)
    return infos


class _NoAnswer(Exception):
    """The server could not be reached, or failed (5xx): whether it has a gateway is
    unknown (as opposed to a clear no)."""


def _get(url: str, token: str | None) -> httpx.Response:
    try:
        with sync_http_client(timeout=_TIMEOUT) as http:
            r = http.get(url, headers=_headers(token))
    except httpx.HTTPError as exc:
        raise _NoAnswer(f"{type(exc).__name__}: {exc}") from None
    if r.status_code >= 500:
        raise _NoAnswer(f"HTTP {r.status_code}")
    return r


def _owns_kernel(url: str, token: str | None, kernel_id: str) -> bool:
    r = _get(url + "api/kernels", token)
    if r.status_code != 200:
        return False
    try:
        kernels = r.json()
    except ValueError:
        return False
    return isinstance(kernels, list) and any(
        isinstance(k, dict) and k.get("id") == kernel_id for k in kernels
    )


def _says_me(r: httpx.Response) -> bool:
    """Is this a gateway's ``me`` (not, say, jupyter-server's own ``api/me``)?"""
    if r.status_code != 200:
        return False
    try:
        body = r.json()
    except ValueError:
        return False
    return isinstance(body, dict) and isinstance(body.get("identified"), bool)


def _has_gateway(url: str, token: str | None) -> bool:
    return _says_me(_get(url + _API + "/me", token))


def gateway_at(url: str, token: str | None, how: str = "given") -> GatewayInfo | None:
    """The gateway at ``url``, a Jupyter server's base URL (``{url}hitl/api/``) or a hub
    service's URL (``{url}api/``), if one answers ``me`` there with ``token``; None
    when neither does. Raises :class:`~hitl_nb.errors.GatewayUnavailable` when the
    host could not be reached or failed (5xx)."""
    base = _with_slash(url)
    info = GatewayInfo(base, token, how)
    try:
        if _has_gateway(base, token):
            return info
        hub = GatewayInfo(base, token, how, base + _HUB_API + "/")
        return hub if _says_me(_get(hub.api_url + "me", token)) else None
    except _NoAnswer as exc:
        raise GatewayUnavailable(
            f"the gateway at {base} ({how}) did not answer: {exc}", info=info
        ) from None


def _hub_gateway(env: Mapping[str, str], token: str | None) -> GatewayInfo | None:
    """The hub's service, from the hub's service list (see the module docstring)."""
    hub_api = env.get("JUPYTERHUB_API_URL")
    if not hub_api or not token:
        return None
    name = env.get("HITL_NB_HUB_SERVICE") or _HUB_SERVICE
    listing = f"{_with_slash(hub_api)}services/{quote(name, safe='')}"
    for pause in (0.5, 1.0, 0.0):  # a hub restarting is back within seconds
        try:
            r = _get(listing, token)
            break
        except _NoAnswer as exc:
            if not pause:
                # Where the service is cannot be known: no address to try answers at.
                raise GatewayUnavailable(
                    f"the JupyterHub at {hub_api} did not answer whether it runs the "
                    f"{name!r} service: {exc}"
                ) from None
            time.sleep(pause)
    if r.status_code != 200:
        return None  # no such service (404), or not one this token may see (403)
    try:
        model = r.json()
    except ValueError:
        return None
    url = model.get("url") if isinstance(model, dict) else None
    prefix = model.get("prefix") if isinstance(model, dict) else None
    if not (isinstance(url, str) and url and isinstance(prefix, str) and prefix):
        return None  # a service without a web address
    base = _with_slash(url.rstrip("/") + "/" + prefix.lstrip("/"))
    info = GatewayInfo(base, token, f"the JupyterHub's {name!r} service", base + _HUB_API + "/")
    try:
        if _says_me(_get(info.api_url + "me", token)):
            return info
    except _NoAnswer as exc:
        raise GatewayUnavailable(
            f"the JupyterHub's {name!r} service at {base} did not answer: {exc}", info=info
        ) from None
    return None


def _unavailable(info: GatewayInfo, why: str, strict: bool) -> None:
    if strict:
        raise GatewayUnavailable(
            f"the Jupyter server at {info.url} ({info.how}) did not answer whether it has "
            f"a responder gateway: {why}",
            info=info,
        )


def _with_slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def find_gateway(
    *,
    connection_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    strict: bool = False,
) -> GatewayInfo | None:
    """The gateway this kernel answers through: the hub's service, else the Jupyter
    server running this kernel, or None (see the module docstring for how it is found).
    ``connection_file``/``environ`` default to this kernel's own.

    None means no gateway: no hub service and no launching server, or a server that
    says it has no extension (or does not know this kernel). ``strict=True`` tells the
    other case apart: a gateway's host was found but could not be reached or failed
    (5xx), so whether it has a gateway is unknown; that raises
    :class:`~hitl_nb.errors.GatewayUnavailable` (its ``info`` is where the gateway would
    be) instead of returning None."""
    env = os.environ if environ is None else environ
    own_token = env.get("HITL_NB_GATEWAY_TOKEN") or None
    hub_token = env.get("JUPYTERHUB_API_TOKEN") or None
    explicit = env.get("HITL_NB_GATEWAY")
    if explicit:
        try:
            return gateway_at(explicit, own_token or hub_token, "HITL_NB_GATEWAY")
        except GatewayUnavailable:
            if strict:
                raise
            return None
    try:
        on_hub = _hub_gateway(env, own_token or hub_token)
    except GatewayUnavailable:
        if strict:
            raise
        on_hub = None
    if on_hub is not None:
        return on_hub
    found = kernel_server(connection_file=connection_file, environ=env)
    if found is None:
        return None
    info, kernel_id = found
    try:
        if not _owns_kernel(info.url, info.token, kernel_id) or not _has_gateway(
            info.url, info.token
        ):
            return None
    except _NoAnswer as exc:
        _unavailable(info, str(exc), strict)
        return None
    return info


def kernel_server(
    *,
    connection_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[GatewayInfo, str] | None:
    """The Jupyter server that started this kernel, and this kernel's id, from facts
    (step 3 of the module docstring, without asking the server anything): its URL and
    the token to use (``HITL_NB_GATEWAY_TOKEN``, else ``JUPYTERHUB_API_TOKEN``, else the
    token of its info file). None outside a kernel such a server started."""
    env = os.environ if environ is None else environ
    own_token = env.get("HITL_NB_GATEWAY_TOKEN") or None
    hub_token = env.get("JUPYTERHUB_API_TOKEN") or None
    parent = env.get("JPY_PARENT_PID", "")
    conn = str(connection_file) if connection_file is not None else _connection_file()
    if not parent.isdigit() or not conn:
        return None
    conn_path = Path(conn)
    name = conn_path.name
    if not (name.startswith("kernel-") and name.endswith(".json")):
        return None
    kernel_id = name[len("kernel-") : -len(".json")]
    for server in _server_infos(conn_path.parent):
        if str(server.get("pid")) != parent or not isinstance(server.get("url"), str):
            continue
        url = _with_slash(server["url"])
        file_token = server.get("token") if isinstance(server.get("token"), str) else None
        token = own_token or hub_token or file_token or None
        how = "the Jupyter server that started this kernel"
        if own_token:
            how += " (HITL_NB_GATEWAY_TOKEN)"
        elif hub_token:
            how += " (JupyterHub token)"
        return GatewayInfo(url, token, how), kernel_id
    return None


def find_prompt(task: Any, prompt_id: str) -> dict[str, Any] | None:
    """The prompt ``prompt_id`` in a task as a gateway shows it (the ``prompts`` of
    :meth:`GatewayClient.task`, or of the gateway's own view of a registration), or None:
    not there, or not a task's JSON at all (whatever is not an object is skipped)."""
    prompts = task.get("prompts") if isinstance(task, dict) else None
    for prompt in prompts if isinstance(prompts, list) else []:
        if isinstance(prompt, dict) and prompt.get("prompt_id") == prompt_id:
            return prompt
    return None


class GatewayClient:
    """Synchronous calls to a responder gateway (safe in a notebook cell: the server is
    another process, nothing runs on the kernel's event loop).

    >>> gw = GatewayClient(find_gateway())                  # doctest: +SKIP
    >>> reg = gw.register(agent_url, task_id)               # doctest: +SKIP
    >>> gw.answer(reg["id"], prompt_id, {"approve": True})  # doctest: +SKIP
    """

    def __init__(self, info: GatewayInfo, *, timeout: float = 30.0) -> None:
        self.info = info
        self._http = sync_http_client(
            base_url=info.api_url,
            headers=_headers(info.token),
            timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
        )

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> GatewayClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, str] | None = None,
        max_bytes: int = _MAX_ANSWER,
    ) -> tuple[int, dict[str, Any]]:
        try:
            r = self._http.request(method, path, json=body, params=params)
        except httpx.TimeoutException as exc:
            raise AgentTimeout(f"the Jupyter server's gateway timed out: {exc}") from exc
        except httpx.HTTPError as exc:
            raise AgentUnreachable(
                f"the Jupyter server's gateway could not be reached: {exc}"
            ) from exc
        if len(r.content) > max_bytes:
            raise ProtocolViolation("the gateway's answer is too large")
        try:
            data = parse_json(r.content, max_bytes=max_bytes, max_depth=_MAX_DEPTH)
        except BadJSON as exc:
            raise ProtocolViolation(
                f"the gateway answered HTTP {r.status_code} without JSON ({exc})"
            ) from None
        if not isinstance(data, dict):
            raise ProtocolViolation("the gateway's answer is not a JSON object")
        if r.status_code >= 400:
            raise _refusal(r.status_code, data)
        return r.status_code, data

    def me(self) -> dict[str, Any]:
        """Who the server says this kernel's requests come from (``name`` None: a
        server that cannot tell users apart)."""
        return self._call("GET", "me")[1]

    def prompts(
        self,
        *,
        agent: str | None = None,
        responder: str | None = None,
        due_within: float | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """The open prompts across every registered task, soonest deadline first
        (``{"prompts": [...], "total": n}``): only those of ``agent`` (its URL), those
        ``responder`` may answer (a user name, or ``"me"``), those due within
        ``due_within`` seconds; at most ``limit`` (the server's default: 1,000)."""
        params = {"agent": agent, "responder": responder}
        query = {k: v for k, v in params.items() if v}
        if due_within is not None:
            query["due_within"] = repr(float(due_within))
        if limit is not None:
            query["limit"] = str(int(limit))
        return self._call("GET", "prompts", params=query, max_bytes=_MAX_LISTING)[1]

    def feed(self, *, registered: bool = False) -> AsyncIterator[FeedUpdate]:
        """The gateway's feed (:func:`feed_of` this client's gateway)."""
        return feed_of(self.info, registered=registered)

    def register(
        self, agent_url: str, task_id: str, deadline: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Watch a task; returns the registration (``id``) with its ``prompts``.
        ``deadline``: what the gateway does at a prompt's deadline (``{"policy":
        "remind" | "escalate" | "default" | "cancel", ...}``, docs/hub.md; None: the
        administrator's default)."""
        body: dict[str, Any] = {"agent_url": agent_url, "task_id": task_id}
        if deadline is not None:
            body["deadline"] = dict(deadline)
        return self._call("POST", "tasks", body)[1]

    def task(self, registration_id: str) -> dict[str, Any]:
        """A registration with its prompts, as the gateway knows them now."""
        return self._call("GET", f"tasks/{quote(registration_id, safe='')}")[1]

    def answer(
        self, registration_id: str, prompt_id: str, payload: Mapping[str, Any]
    ) -> GatewayAnswer:
        """Answer a prompt as this kernel's user.

        Raises :class:`~hitl_nb.errors.ResponseInvalid` (422, with
        ``validation_errors``), :class:`~hitl_nb.errors.PromptConflict` (409: answered
        already) or :class:`~hitl_nb.errors.GatewayRefused` (403 not yours to answer,
        404, 410 past the deadline, 502 the agent refused).
        """
        path = f"tasks/{quote(registration_id, safe='')}/prompts/{quote(prompt_id, safe='')}/answer"
        _, body = self._call("POST", path, {"payload": dict(payload)})
        return GatewayAnswer(str(body.get("status")), str(body.get("message", "")), body)


async def feed_of(info: GatewayInfo, *, registered: bool = False) -> AsyncIterator[FeedUpdate]:
    """Follow the feed of the gateway ``info`` names (``GET api/feed``, server-sent
    events): the open prompts its user may answer, or (``registered``) those of the tasks
    they registered, whoever may answer them; a snapshot, then each change, as
    :class:`~hitl_nb.client.FeedUpdate`. Runs on the caller's event loop (a connection of
    its own); raises :class:`~hitl_nb.errors.GatewayUnavailable` when the feed is
    refused, cannot be reached, or ends."""
    url = info.api_url + "feed" + ("?registered=mine" if registered else "")
    async with http_client(
        headers=_headers(info.token),
        timeout=httpx.Timeout(_TIMEOUT, read=FEED_READ_TIMEOUT),
    ) as http:
        async for update in read_feed(http, url, where=f"the gateway at {info.url}"):
            yield update


def _refusal(status: int, body: dict[str, Any]) -> HitlError:
    """The error for a gateway's refusal: its class from :func:`~hitl_nb.errors.error_for_status`
    (409 and 422 as from an agent, the rest :class:`~hitl_nb.errors.GatewayRefused`),
    with the gateway's own words."""
    message = str(body.get("message") or f"HTTP {status}")
    cls = error_for_status(status, gateway=True)
    if issubclass(cls, GatewayRefused):
        return cls(status, message, body)
    if issubclass(cls, ResponseInvalid):
        issues = body.get("validation_errors")
        listed = [e for e in issues if isinstance(e, dict)] if isinstance(issues, list) else []
        return cls(message, validation_errors=listed)
    return cls(message)
