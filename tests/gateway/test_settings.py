"""The gateway's settings: one declaration (``GatewaySettings``), its checks, and the
docs' table of settings, which is that declaration row for row."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from traitlets import Bool, Dict, List, TraitError

from hitl_nb.gateway import GatewaySettings
from hitl_nb.hub import HubSettings
from hitl_nb.hub._options import flag_of
from hitl_nb.server import HitlServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "server.md"
HEADER = "| `c.HitlServer.` | `hitl-nb hub-service` | default | what it does |"


def _default(trait: Any) -> str:
    value = trait.default()
    return f"`{value:g}`" if isinstance(value, float) else f"`{value!r}`"


def _flag(name: str, trait: Any) -> str:
    flag = flag_of(name, trait)
    if isinstance(trait, Bool):
        return f"`{flag}`, `--no-{flag[2:]}`"
    if isinstance(trait, List):
        return f"`{flag}` (once per item)"
    if trait.metadata.get("environment"):
        return f"environment `{trait.metadata['environment']}` (JSON)"
    if isinstance(trait, Dict):
        return f"`{flag}` (JSON)"
    return f"`{flag}`"


def settings_table() -> str:
    """The docs' table, from the declaration (both hosts' settings, by name)."""
    server = HitlServer.class_traits(config=True)
    hub = HubSettings.class_traits(config=True)
    rows = [HEADER, "|---|---|---|---|"]
    for name in sorted(set(server) | set(hub)):
        trait = server.get(name) or hub[name]
        on_server = f"`{name}`" if name in server else "(the hub only)"
        on_hub = _flag(name, trait) if name in hub else "(a server only)"
        rows.append(f"| {on_server} | {on_hub} | {_default(trait)} | {trait.help} |")
    return "\n".join(rows)


def test_the_docs_table_is_the_declaration() -> None:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(re.escape(HEADER) + r"\n(?:\|.*\n?)+", text)
    assert found, f"docs/server.md has no table of settings starting {HEADER}"
    expected = settings_table()
    assert found.group(0).strip() == expected, (
        "docs/server.md's table of settings differs from the declaration; it should read:\n"
        + expected
    )


def test_both_hosts_read_the_one_declaration() -> None:
    shared = GatewaySettings.class_traits(config=True)
    for host in (HitlServer, HubSettings):
        mine = host.class_traits(config=True)
        assert {name: mine[name] for name in shared} == shared  # the same trait objects
    assert HitlServer().show_all is True and HitlServer().where == "this server"
    assert HubSettings().show_all is False and HubSettings().where == "this hub"


def test_every_setting_has_its_help() -> None:
    for host in (HitlServer, HubSettings):
        for name, trait in host.class_traits(config=True).items():
            assert trait.help and trait.help.endswith("."), name


def test_nothing_secret_is_a_setting() -> None:
    # A hub shows a service's command (the settings' flags) to whoever may read it. A
    # setting may name where a secret is (an environment variable, a file), never hold it.
    names = set(HitlServer.class_traits(config=True)) | set(HubSettings.class_traits(config=True))
    places = {n for n in names if n.endswith(("_env", "_file"))}
    assert not {n for n in names - places if re.search(r"secret|password|token|db_url", n)}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        pytest.param("lease_seconds", math.nan, id="lease-nan"),
        pytest.param("lease_seconds", math.inf, id="lease-inf"),
        pytest.param("lease_seconds", 0.1, id="lease-too-short"),
        pytest.param("lease_seconds", 7200, id="lease-too-long"),
        pytest.param("poll_interval", 0, id="poll-zero"),
        pytest.param("poll_interval", -1.0, id="poll-negative"),
        pytest.param("agent_timeout", math.nan, id="timeout-nan"),
        pytest.param("agent_timeout", "30", id="timeout-text"),
        pytest.param("max_registrations", -1, id="registrations-negative"),
        pytest.param("max_streams", 1.5, id="streams-not-whole"),
        pytest.param("max_push_bytes", 0, id="push-bytes-zero"),
        pytest.param("allowed_agent_hosts", ["a.example", 3], id="hosts-not-text"),
    ],
)
def test_a_value_a_gateway_cannot_use_is_refused_naming_the_setting(name: str, value: Any) -> None:
    with pytest.raises(TraitError, match=name):
        GatewaySettings(**{name: value})


def test_seconds_take_whole_numbers_and_keep_their_bounds() -> None:
    settings = GatewaySettings(lease_seconds=1, poll_interval=0.05, agent_timeout=3600)
    assert (settings.lease_seconds, settings.poll_interval) == (1.0, 0.05)
    assert isinstance(settings.lease_seconds, float)
    with pytest.raises(TraitError, match="from 0.5 to 3600, not nan"):
        settings.lease_seconds = math.nan
    assert settings.lease_seconds == 1.0  # a refused value changes nothing


def test_one_default_for_both_hosts() -> None:
    # max_registrations was 1,000 on a server and 10,000 on the hub: one default now.
    assert HitlServer().max_registrations == HubSettings().max_registrations == 10_000
    for name in GatewaySettings.class_traits(config=True):
        assert getattr(HitlServer(), name) == getattr(HubSettings(), name), name
