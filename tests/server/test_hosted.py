"""The mock agent hosted in a Jupyter server: authentication, card URLs, both bindings."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from hitl_nb import HitlClient, PromptEvent
from hitl_nb.server import MOCK_AGENT_PATH
from tests.helpers.jupyter_users import auth, browser

pytestmark = pytest.mark.kernel


def card_path() -> str:
    return f"{MOCK_AGENT_PATH}/.well-known/agent-card.json"


async def test_card_urls_are_right_behind_the_base_url(api: Any, server_url: str) -> None:
    status, card = await api("GET", card_path())
    assert status == 200
    base = server_url + MOCK_AGENT_PATH
    assert "%40" in base  # pytest-jupyter's base URL /a%40b/ needs escaping right
    assert {(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]} == {
        ("JSONRPC", base + "/"),
        ("HTTP+JSON", base),
    }


async def test_unauthenticated_requests_get_403(api: Any) -> None:
    for method, path, body in [
        ("GET", card_path(), None),
        ("POST", MOCK_AGENT_PATH + "/", {"jsonrpc": "2.0", "id": 1, "method": "GetTask"}),
        ("POST", MOCK_AGENT_PATH + "/message:send", {}),
        ("GET", MOCK_AGENT_PATH + "/tasks", None),
    ]:
        status, answer = await api(method, path, user=None, body=body)
        assert status == 403, (method, path)
        assert answer["message"]  # a JSON body saying why, not a login page


async def test_cookie_authenticated_post_needs_xsrf(gateway: Any, jp_fetch: Any) -> None:
    # ``gateway``: the server's gateway is stopped after the test (its rounds with it).
    # A logged-in browser (cookie) must not be made to drive the agent by another site:
    # without the XSRF token pair the POST is refused before the agent sees it.
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "approval"}]}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    )
    path = [*MOCK_AGENT_PATH.split("/"), ""]
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch(*path, method="POST", body=body, headers=browser("bob"))
    assert refused.value.code == 403
    xsrf = "2|01020304|0a0b0c0d0e0f|1700000000"
    headers = {**browser("bob", xsrf=xsrf), "A2A-Version": "1.0"}
    headers["Content-Type"] = "application/json"
    ok = await jp_fetch(*path, method="POST", body=body, headers=headers)
    assert ok.code == 200
    reply = json.loads(ok.body)
    assert "task" in reply.get("result", {}), reply
    # A GET with the cookie alone is fine (reads need no XSRF token).
    card = await jp_fetch(*card_path().split("/"), headers=browser("bob"))
    assert card.code == 200


async def test_a_client_with_the_token_header_gets_a_prompt_and_answers(server_url: str) -> None:
    url = server_url + MOCK_AGENT_PATH
    for binding in ("JSONRPC", "HTTP+JSON"):
        async with HitlClient(url, binding=binding, headers=auth("bob")) as client:
            prompt = None
            async for event in client.stream("approval"):
                if isinstance(event, PromptEvent):
                    prompt = event
                    break
            assert prompt is not None, binding
            assert client.selection is not None and client.selection.binding == binding
            done = await client.respond(prompt.task_id, prompt.prompt_id, {"approve": True})
            assert done.status.state.value != "input_required"  # type: ignore[union-attr]


async def _conformance(url: str, binding: str, token: str, tmp: str) -> dict[str, Any]:
    out = os.path.join(tmp, f"report-{binding}.json")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "hitl_nb.cli",
        "conformance",
        url,
        "--binding",
        binding,
        "--header",
        f"Authorization: token {token}",
        "--json",
        out,
        "--quiet",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await proc.communicate()
    assert proc.returncode == 0, output.decode()
    with open(out) as f:
        report: dict[str, Any] = json.load(f)
    return report


@pytest.mark.slow
async def test_hosted_agent_passes_conformance_on_both_bindings(
    server_url: str, tmp_path: Any
) -> None:
    url = server_url + MOCK_AGENT_PATH
    for binding in ("JSONRPC", "HTTP+JSON"):
        report = await _conformance(url, binding, "carol-token", str(tmp_path))
        assert report["passed"] is True, report
        outcomes = {r["id"]: r["outcome"] for r in report["results"]}
        assert all(outcomes[f"CF-{i}"] == "passed" for i in range(1, 8)), outcomes
        assert report["binding"] == binding
