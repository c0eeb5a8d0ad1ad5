"""client/_gateway.py: the kernel's calls to the Jupyter server's responder gateway.

The gateway itself is tested in tests/server/; here the client is held against a tiny
server that answers whatever a test needs, hostile answers included.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hitl_nb.client import GatewayAnswer, GatewayClient, GatewayInfo, find_gateway, find_prompt
from hitl_nb.errors import (
    AgentUnreachable,
    GatewayRefused,
    GatewayUnavailable,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
    error_for_status,
)
from tests.helpers.tiny_server import serve


def _info(url: str) -> GatewayInfo:
    return GatewayInfo(url + "/", "secret", "test")


def test_prompts_asks_the_listing_with_its_filters() -> None:
    seen: list[Any] = []

    def listing(req: Any, conn: Any) -> None:
        seen.append((req.path, req.header("authorization")))
        conn.answer({"prompts": [], "total": 0})

    with serve(listing) as server, GatewayClient(_info(server.url)) as gateway:
        assert gateway.prompts() == {"prompts": [], "total": 0}
        gateway.prompts(agent="http://a.example/", responder="me", due_within=90, limit=5)
    bare, filtered = (urlsplit(path) for path, _ in seen)
    assert bare.path == "/hitl/api/prompts" and bare.query == ""
    assert parse_qs(filtered.query) == {
        "agent": ["http://a.example/"],
        "responder": ["me"],
        "due_within": ["90.0"],
        "limit": ["5"],
    }
    assert {auth for _, auth in seen} == {"token secret"}


@pytest.mark.parametrize(
    ("handler", "error", "words"),
    [
        (lambda r, c: c.answer({"message": "not yours"}, status=403), GatewayRefused, "not yours"),
        (
            lambda r, c: c.answer(b"<html>busy</html>", content_type="text/html"),
            ProtocolViolation,
            "HTTP 200 without JSON",
        ),
        (lambda r, c: c.answer([1, 2]), ProtocolViolation, "not a JSON object"),
        (
            lambda r, c: c.answer(b'{"prompts": [], "\\uDC00": 0}'),
            ProtocolViolation,
            r"HTTP 200 without JSON \(the JSON text holds a lone UTF-16 surrogate \(\\udc00\)",
        ),
        (lambda r, c: c.cut(), AgentUnreachable, "gateway could not be reached"),
    ],
)
def test_a_listing_gone_wrong_is_a_clear_error(handler: Any, error: type, words: str) -> None:
    with serve(handler) as server, GatewayClient(_info(server.url), timeout=5) as gateway:
        with pytest.raises(error, match=words):
            gateway.prompts(limit=10)


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (409, {"status": "closed", "message": "answered already"}, PromptConflict),
        (
            422,
            {"message": "no", "validation_errors": [{"path": "/ok", "message": "x"}, 3]},
            ResponseInvalid,
        ),
        (410, {"message": "past its deadline"}, GatewayRefused),
        (404, {"error": 404}, GatewayRefused),
        (502, {"status": "failed", "message": "the agent refused"}, GatewayRefused),
    ],
)
def test_every_refusal_of_an_answer_becomes_the_errors_table_class(
    status: int, body: dict[str, Any], error: type
) -> None:
    def refuse(req: Any, conn: Any) -> None:
        conn.answer(body, status=status)

    with serve(refuse) as server, GatewayClient(_info(server.url), timeout=5) as gateway:
        with pytest.raises(error) as caught:
            gateway.answer("r1", "p1", {"ok": True})
    assert type(caught.value) is error_for_status(status, gateway=True)
    assert str(caught.value).startswith(str(body.get("message") or f"HTTP {status}"))
    if isinstance(caught.value, GatewayRefused):
        assert caught.value.status == status and caught.value.body == body
    if isinstance(caught.value, ResponseInvalid):  # an entry that is not an object is left out
        assert caught.value.validation_errors == [{"path": "/ok", "message": "x"}]


def test_an_answer_says_who_agreed_and_how_many_answered() -> None:
    def forwarded(req: Any, conn: Any) -> None:
        conn.answer({"status": "forwarded", "responders": ["alice", 7], "answers": 2})

    with serve(forwarded) as server, GatewayClient(_info(server.url), timeout=5) as gateway:
        answer = gateway.answer("r1", "p1", {"ok": True})
    assert answer.status == "forwarded" and answer.answers == 2
    assert answer.responders == ["alice", "7"]
    odd = GatewayAnswer("collecting", "", {"answers": "two", "responders": "alice"})
    assert odd.answers == 0 and odd.responders == []


@pytest.mark.parametrize(
    ("task", "found"),
    [
        pytest.param(
            {"prompts": [{"prompt_id": "p0"}, {"prompt_id": "p1", "n": 1}]}, 1, id="found"
        ),
        pytest.param({"prompts": [{"prompt_id": "p0"}]}, None, id="not-there"),
        pytest.param({"prompts": ["p1", None, {"prompt_id": "p1", "n": 2}]}, 2, id="non-objects"),
        pytest.param({"prompts": {"prompt_id": "p1"}}, None, id="prompts-not-a-list"),
        pytest.param({}, None, id="no-prompts"),
        pytest.param(["p1"], None, id="not-an-object"),
        pytest.param(None, None, id="nothing"),
    ],
)
def test_find_prompt_reads_a_tasks_prompts_and_skips_what_is_not_one(task: Any, found: Any) -> None:
    prompt = find_prompt(task, "p1")
    assert (prompt["n"] if prompt is not None else None) == found


# -- finding a JupyterHub's service (the hub's service list, hostile answers included) --

ME = {"name": "alice", "display_name": "alice", "identified": True, "admin": False}
MODEL = {"name": "hitl", "url": "{url}", "prefix": "/services/hitl/"}


@contextmanager
def _hub(services: Any, me: Any = ME, me_status: int = 200) -> Iterator[tuple[dict, Any]]:
    """A tiny "hub" and its service on one port: ``services/hitl`` answers ``services``
    (a model whose ``{url}`` is this server's URL, a status, or raw bytes) and the
    service's ``api/me`` answers ``me``. Yields (authorization seen per path, server)."""
    seen: dict[str, str] = {}

    def handler(req: Any, conn: Any) -> None:
        path = urlsplit(req.path).path
        seen[path] = req.header("authorization") or ""
        if path == "/hub/api/services/hitl":
            if isinstance(services, int):
                conn.answer({"message": "no"}, status=services)
            elif isinstance(services, bytes):
                conn.answer(services)
            elif isinstance(services, dict):
                conn.answer(
                    {
                        k: (v.format(url=server.url) if isinstance(v, str) else v)
                        for k, v in services.items()
                    }
                )
            else:
                conn.answer(services)
        elif path == "/services/hitl/api/me":
            conn.answer(me, status=me_status)
        else:
            conn.answer({"message": "no such page"}, status=404)

    with serve(handler) as server:
        yield seen, server


def _env(url: str) -> dict[str, str]:
    return {"JUPYTERHUB_API_URL": url + "/hub/api", "JUPYTERHUB_API_TOKEN": "kernel-token"}


def test_the_hubs_service_list_names_the_gateway_and_its_api() -> None:
    with _hub(MODEL) as (seen, hub):
        info = find_gateway(environ=_env(hub.url), connection_file="")
        assert info is not None and info.on_hub
        assert info.url == hub.url + "/services/hitl/"
        assert info.api_url == hub.url + "/services/hitl/api/"
        assert set(seen.values()) == {"token kernel-token"}  # the kernel's own token
        with GatewayClient(info) as client:
            assert client.me() == ME


@pytest.mark.parametrize(
    ("services", "me"),
    [
        pytest.param(404, ME, id="no-such-service"),
        pytest.param(403, ME, id="not-allowed-to-see-it"),
        pytest.param(b"<html>", ME, id="not-json"),
        pytest.param([1, 2], ME, id="not-a-model"),
        pytest.param({"name": "hitl", "prefix": "/services/hitl/"}, ME, id="no-url"),
        pytest.param({"name": "hitl", "url": "{url}", "prefix": 5}, ME, id="prefix-not-text"),
        pytest.param(MODEL, {"identity": {"username": "x"}}, id="jupyter-servers-own-api-me"),
        pytest.param(MODEL, {"identified": "yes"}, id="me-of-another-shape"),
    ],
)
def test_a_hub_without_a_usable_service_is_no_gateway(services: Any, me: Any) -> None:
    with _hub(services, me) as (_, hub):
        assert find_gateway(environ=_env(hub.url), connection_file="", strict=True) is None


def test_a_service_that_fails_is_unavailable_and_named_when_strict() -> None:
    with _hub(MODEL, {"message": "down"}, me_status=502) as (_, hub):
        assert find_gateway(environ=_env(hub.url), connection_file="") is None
        with pytest.raises(GatewayUnavailable, match="'hitl' service") as failed:
            find_gateway(environ=_env(hub.url), connection_file="", strict=True)
    info = failed.value.info
    assert isinstance(info, GatewayInfo) and info.on_hub  # where answers would go
