"""The one link a message carries: where to answer, and nothing more."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import AnswerLinks


def test_a_hub_link_goes_through_user_redirect_to_the_readers_lab():
    links = AnswerLinks("https://hub.example.org/", hub=True)
    url = links.prompt("reg-1", "p/1 & more")
    parts = urlsplit(url)
    assert parts.path == "/hub/user-redirect/lab"
    assert parse_qs(parts.query) == {"hitl-registration": ["reg-1"], "hitl-prompt": ["p/1 & more"]}
    assert " " not in url and "|" not in url and ">" not in url
    assert links.inbox() == "https://hub.example.org/hub/user-redirect/lab?hitl-inbox=1"


def test_a_hub_under_a_base_url_and_a_server_link():
    assert (
        AnswerLinks("https://example.org/jhub", hub=True)
        .prompt("r", "p")
        .startswith("https://example.org/jhub/hub/user-redirect/lab?")
    )
    server = AnswerLinks("http://127.0.0.1:8888/base/", hub=False)
    assert server.prompt("r", "p") == (
        "http://127.0.0.1:8888/base/lab?hitl-registration=r&hitl-prompt=p"
    )


@pytest.mark.parametrize(
    "base",
    [
        pytest.param("hub.example.org", id="no-scheme"),
        pytest.param("javascript:alert(1)", id="javascript"),
        pytest.param("https://user:token@hub.example.org/", id="credentials"),
        pytest.param("https://hub.example.org/?token=abc", id="query"),
        pytest.param("https://hub.example.org/#x", id="fragment"),
    ],
)
def test_a_link_never_carries_a_credential_or_another_scheme(base):
    with pytest.raises(NotifyRefused):
        AnswerLinks(base, hub=True)
