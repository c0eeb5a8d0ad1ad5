"""A single server's messages link to its answer page by default: bob's email opens
``{server}/hitl/answer/prompt/...``, and for a one-choice prompt it carries a link per
choice to a confirm page; fetching those (as a mail scanner does) answers nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.smtp import SmtpServer, smtp_server
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until_async
from tests.server.test_answer_page import fetch, post_confirm  # noqa: F401
from tests.server.test_notify import _mail_to, register, soon

pytestmark = pytest.mark.kernel


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    with smtp_server() as server:
        yield server


@pytest.fixture
def jp_server_config(tmp_path: Path, smtp: SmtpServer) -> dict[str, Any]:
    from tests.helpers.jupyter_users import NamedTokens

    return {
        "ServerApp": {
            "jpserver_extensions": {"hitl_nb.server": True},
            "identity_provider_class": NamedTokens,
        },
        "HitlServer": {
            "state_dir": str(tmp_path / "hitl-state"),
            "notify_smtp_host": smtp.host,
            "notify_smtp_port": smtp.port,
            "notify_smtp_security": "none",
            "notify_from": "hitl@example.org",
            "notify_address_template": "{name}@example.org",
            "notify_every": 0.0,
        },
    }


async def test_bobs_email_links_to_the_answer_page_with_a_link_per_choice(
    api: Any,
    agent: MockAgent,
    smtp: SmtpServer,
    server_url: str,
    fetch: Any,  # noqa: F811
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg = await register(api, agent.url, task.id)
    (prompt,) = reg["prompts"]
    pid = prompt["prompt_id"]
    await until_async(soon(lambda: _mail_to(smtp, "bob@example.org")), what="bob's email")
    (mail,) = _mail_to(smtp, "bob@example.org")
    body = mail.get_body(("plain",)).get_content()
    links = [w for w in body.split() if w.startswith("http")]
    base = urlsplit(server_url).path
    paths = [
        urlsplit(link).path + (f"?{urlsplit(link).query}" if "?" in link else "") for link in links
    ]
    assert paths == [
        f"{base}hitl/answer/prompt/{reg['id']}/{pid}",
        f"{base}hitl/answer/confirm/{reg['id']}/{pid}?choice=0",
        f"{base}hitl/answer/confirm/{reg['id']}/{pid}?choice=1",
    ]
    assert "- Approve: Yes: " in body and "- Approve: No: " in body
    assert "token" not in body.lower()
    html_part = mail.get_body(("html",)).get_content()
    assert f"confirm/{reg['id']}/{pid}?choice=0" in html_part
    # a mail scanner fetches every link, logged in or not: nothing is answered
    for link in links:
        page = await fetch(urlsplit(link).path[len(base) :], params=_query(link))
        assert page.code in (200, 302)
        page = await fetch(urlsplit(link).path[len(base) :], user="bob", params=_query(link))
        assert page.code == 200
    assert await answers_at_agent(agent.url, task.id) == []
    done = await post_confirm(fetch, "bob", reg["id"], pid, "1")
    assert done.code == 200 and "Answer accepted" in done.words
    assert await answers_at_agent(agent.url, task.id) == [
        {"prompt_id": pid, "payload": {"approve": False}}
    ]


def _query(link: str) -> dict[str, str] | None:
    query = urlsplit(link).query
    return dict(part.split("=", 1) for part in query.split("&")) if query else None
