"""Addresses and webhook URLs, checked before anything is sent to them."""

from __future__ import annotations

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import Secret
from hitl_nb.notify._email import EmailTarget
from hitl_nb.notify._signed import SignedTarget
from hitl_nb.notify._slack import SlackTarget
from hitl_nb.notify._targets import check_address, check_webhook_url


@pytest.mark.parametrize(
    "address", ["bob@example.org", "b.o+b@mail.example.org", "o'neil@example.co.uk"]
)
def test_plain_addresses(address):
    assert check_address(address) == address
    assert EmailTarget(address).address == address


@pytest.mark.parametrize(
    "address",
    [
        pytest.param("bob", id="no-at"),
        pytest.param("bob@localhost", id="no-dot"),
        pytest.param("a@b@example.org", id="two-ats"),
        pytest.param("Bob <bob@example.org>", id="display-name"),
        pytest.param("bob@example.org\r\nBcc: x@evil.org", id="header-break"),
        pytest.param("bob smith@example.org", id="space"),
        pytest.param(".bob@example.org", id="leading-dot"),
        pytest.param("bo..b@example.org", id="double-dot"),
        pytest.param("bøb@example.org", id="non-ascii"),
        pytest.param("bob@-example.org", id="bad-label"),
        pytest.param("bob@[127.0.0.1]", id="ip-literal"),
        pytest.param("x" * 65 + "@example.org", id="long-local"),
        pytest.param("", id="empty"),
    ],
)
def test_anything_else_is_no_address(address):
    with pytest.raises(NotifyRefused):
        check_address(address)


ALLOWED = [
    "hooks.slack.com",
    "*.example.org",
    "chat.internal:8065",
    "http://mattermost.lan",
    "10.1.2.3",
]


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.slack.com/services/T/B/x",
        "https://team.example.org/hooks/abc",
        "https://a.b.example.org/x",
        "https://HOOKS.SLACK.COM/x",
        "https://hooks.slack.com./x",
        "https://chat.internal:8065/hooks/x",
        "http://mattermost.lan/hooks/x",
        "https://mattermost.lan/hooks/x",
        "https://10.1.2.3/hook",
    ],
)
def test_a_personal_webhook_on_the_allow_list(url):
    assert check_webhook_url(url, ALLOWED) == url


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("https://evil.example/x", id="another-host"),
        pytest.param("https://example.org/x", id="wildcard-needs-a-label"),
        pytest.param("https://example.org.evil.example/x", id="suffix-trick"),
        pytest.param("https://hooks.slack.com@evil.example/x", id="userinfo-host"),
        pytest.param("https://user:pw@hooks.slack.com/x", id="userinfo"),
        pytest.param("https://evil.example\\@hooks.slack.com/x", id="backslash"),
        pytest.param("https://evil.example#@hooks.slack.com/x", id="fragment-trick"),
        pytest.param("https://evil.example?@hooks.slack.com/x", id="query-trick"),
        pytest.param("http://hooks.slack.com/x", id="plain-http-not-allowed"),
        pytest.param("https://chat.internal:8066/x", id="other-port"),
        pytest.param("https://169.254.169.254/latest/meta-data", id="ip-literal"),
        pytest.param("https://[::1]/x", id="ipv6-literal"),
        pytest.param("https://2130706433/x", id="decimal-ip"),
        pytest.param("https://0x7f.1/x", id="hex-ip"),
        pytest.param("https://10.1.2.4/x", id="other-ip"),
        pytest.param("ftp://hooks.slack.com/x", id="scheme"),
        pytest.param("javascript:alert(1)", id="javascript"),
        pytest.param("//hooks.slack.com/x", id="relative"),
        pytest.param("https://hooks.slack.com/x y", id="space"),
        pytest.param("https://hooks.slack.com/x\r\nHost: evil", id="crlf"),
        pytest.param("https://hooks.slack.com/" + "x" * 3000, id="too-long"),
    ],
)
def test_hostile_personal_webhooks_are_refused(url):
    with pytest.raises(NotifyRefused):
        check_webhook_url(url, ALLOWED)


def test_an_allow_list_of_only_a_star_or_nothing_allows_nothing():
    for allowed in ([], ["*"], ["https://*"], [""]):
        with pytest.raises(NotifyRefused):
            check_webhook_url("https://hooks.slack.com/x", allowed)


def test_the_administrators_own_urls_need_no_list_but_keep_the_rules():
    assert check_webhook_url("http://10.0.0.5:8080/hook", admin=True)
    for bad in ("https://u:p@hooks.example/x", "ftp://x.example/", "https://x.example/\n"):
        with pytest.raises(NotifyRefused):
            check_webhook_url(bad, admin=True)


def test_targets_never_show_their_secret_path_or_key():
    slack = SlackTarget("https://hooks.slack.com/services/T0/B0/SECRETPATH", admin=True)
    signed = SignedTarget("https://hooks.example.org/in/SECRETPATH", Secret(env="HOOK_KEY"))
    assert "SECRETPATH" not in repr(slack) and "SECRETPATH" not in repr(signed)
    assert repr(slack) == "SlackTarget('https://hooks.slack.com/...', admin=True)"
