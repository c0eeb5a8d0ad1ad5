"""Client settings are objects: HttpLimits and Reconnect, checked, shared by both clients."""

import inspect

import pytest

from hitl_nb.client import HitlClient, HttpLimits, Reconnect, SyncHitlClient

CARD = {
    "name": "settings",
    "supportedInterfaces": [
        {"url": "http://127.0.0.1:9/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {},
}


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"timeout": 0}, id="zero-timeout"),
        pytest.param({"connect_timeout": -1}, id="negative-connect"),
        pytest.param({"stream_idle_timeout": float("nan")}, id="nan-idle"),
        pytest.param({"timeout": "5"}, id="string-timeout"),
        pytest.param({"max_body_size": 0}, id="zero-body"),
        pytest.param({"max_event_size": 1.5}, id="float-event"),
        pytest.param({"max_event_size": True}, id="bool-event"),
    ],
)
def test_bad_limits_are_refused_naming_the_field(kwargs):
    (name,) = kwargs
    with pytest.raises(ValueError, match=f"HttpLimits: {name} must be"):
        HttpLimits(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"max_reconnects": -1}, id="negative-reconnects"),
        pytest.param({"max_total_reconnects": 2.0}, id="float-total"),
        pytest.param({"backoff": -0.1}, id="negative-backoff"),
        pytest.param({"max_backoff": None}, id="none-max-backoff"),
    ],
)
def test_bad_reconnect_settings_are_refused_naming_the_field(kwargs):
    (name,) = kwargs
    with pytest.raises(ValueError, match=f"Reconnect: {name} must be"):
        Reconnect(**kwargs)


def test_zero_reconnects_and_backoff_are_allowed():
    assert Reconnect(max_reconnects=0, backoff=0).delay(1) == 0


def test_the_client_keeps_the_objects_it_is_given():
    limits, reconnect = HttpLimits(timeout=3), Reconnect(max_reconnects=1)
    client = HitlClient(CARD, limits=limits, reconnect=reconnect)
    assert client.limits is limits and client.reconnect is reconnect
    assert HitlClient(CARD).limits == HttpLimits() and HitlClient(CARD).reconnect == Reconnect()


@pytest.mark.parametrize(
    "kwargs",
    [{"limits": {"timeout": 3}}, {"reconnect": 5}],
    ids=["limits-dict", "reconnect-int"],
)
def test_settings_of_the_wrong_type_are_refused(kwargs):
    (name,) = kwargs
    with pytest.raises(TypeError, match=f"{name} must be a"):
        HitlClient(CARD, **kwargs)


def test_the_sync_client_passes_its_settings_through():
    limits, reconnect = HttpLimits(max_event_size=1024), Reconnect(backoff=0)
    with SyncHitlClient(CARD, limits=limits, reconnect=reconnect, headers={"X-A": "1"}) as sync:
        assert sync.client.limits is limits and sync.client.reconnect is reconnect
        assert sync.client._extra_headers == {"X-A": "1"}


def test_the_sync_client_takes_the_async_clients_keywords():
    own = inspect.signature(HitlClient).parameters
    sync = inspect.signature(SyncHitlClient).parameters
    assert set(own) == set(sync) - {"call_timeout"}
    for name in set(own) - {"agent"}:
        assert sync[name].default == own[name].default, name
        assert sync[name].kind is inspect.Parameter.KEYWORD_ONLY
