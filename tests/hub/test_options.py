"""``hitl-nb hub-service``'s command line: one flag per setting of the one declaration,
read back into the gateway's settings, written by ``configure``, and ``--help`` without
JupyterHub."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode

from hitl_nb.cli import build_parser
from hitl_nb.hub import HubSettings
from hitl_nb.hub._options import command_line, environment_of, flag_of, options_from

ROOT = Path(__file__).resolve().parents[2]


def _args(*argv: str) -> Any:
    return build_parser("hub-service").parse_args(["hub-service", *argv])


def test_the_command_line_fills_the_gateways_settings(tmp_path: Path) -> None:
    args = _args(
        "--state-dir",
        str(tmp_path),
        "--allowed-agent-host",
        "a.example.org",
        "--allowed-agent-host",
        "*.b.example",
        "--no-mock-agent",
        "--no-push",
        "--poll-interval",
        "3",
        "--max-streams",
        "5",
        "--accept-after-deadline",
        "--push-url",
        "https://hub.example.org/services/hitl/",
    )
    options = options_from(args, {"HITL_NB_DB_URL": f"sqlite:///{tmp_path}/x.sqlite"})
    s = options.settings
    assert s.allowed_agent_hosts == ["a.example.org", "*.b.example"]
    assert (s.push, s.poll_interval, s.max_streams, s.accept_after_deadline) == (
        False,
        3.0,
        5,
        True,
    )
    assert s.show_all is False and s.where == "this hub"  # a hub's users see their own
    assert options.mock_agent is False and options.state_dir == tmp_path.resolve()
    assert options.db_url == f"sqlite:///{tmp_path}/x.sqlite"
    assert options.push_url == "https://hub.example.org/services/hitl/"


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e9", "soon", ""])
def test_a_lease_it_cannot_keep_is_refused_on_the_command_line(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        _args("--state-dir", str(tmp_path), "--lease-seconds", value)
    assert "--lease-seconds" in capsys.readouterr().err


def test_the_lease_reaches_the_gateways_settings(tmp_path: Path) -> None:
    options = options_from(_args("--state-dir", str(tmp_path), "--lease-seconds", "4.5"), {})
    assert options.settings.lease_seconds == 4.5
    assert options_from(_args("--state-dir", str(tmp_path)), {}).settings.lease_seconds == 15.0


def _other_value(trait: Any) -> Any:
    """A valid value of a setting that is not its default."""
    value = trait.default()
    if isinstance(trait, Bool):
        return not value
    if isinstance(trait, List) and isinstance(trait._trait, Enum):  # a choice of several
        return list(trait._trait.values[:2])
    if isinstance(trait, List):
        return ["a.example.org", "*.b.example:8443"]
    if isinstance(trait, Enum):
        return next(v for v in trait.values if v != value)
    if isinstance(trait, Dict):
        return {"bob": "bob@example.org", "o'brien": {"url": "https://x.example/h"}}
    if isinstance(trait, (Int, Float)):
        return value + 1
    if isinstance(trait, Unicode):
        return "/srv/hitl" if value == "" else value + "-2"
    raise AssertionError(f"a setting of a type this test does not know: {trait!r}")


@pytest.mark.parametrize("name", sorted(HubSettings.class_traits(config=True)))
def test_every_setting_goes_through_the_command_line_and_back(name: str, tmp_path: Path) -> None:
    trait = HubSettings.class_traits(config=True)[name]
    value = _other_value(trait)
    chosen = HubSettings(**{name: value})
    written, environ = command_line(chosen), environment_of(chosen)
    variable = trait.metadata.get("environment")
    if variable:  # a credential: never on the command line, in the environment instead
        assert written == [] and list(environ) == [variable]
        assert all(str(v) not in " ".join(written) for v in value.values())
    else:
        assert environ == {}
        assert flag_of(name, trait) in written or f"--no-{flag_of(name, trait)[2:]}" in written
    read = options_from(_args(*written), environ).settings
    expected = str(Path(value).resolve()) if name == "state_dir" else value
    assert getattr(read, name) == expected
    for other in HubSettings.class_traits(config=True):
        if other not in (name, "state_dir"):
            assert getattr(read, other) == getattr(HubSettings(), other), other


def test_defaults_are_written_as_nothing() -> None:
    assert command_line(HubSettings()) == []
    assert command_line(HubSettings(state_dir="/srv/hitl", poll_interval=10)) == [
        "--state-dir",
        "/srv/hitl",
    ]


def test_help_lists_every_setting_and_needs_no_jupyterhub() -> None:
    # The hub may run elsewhere: hitl-nb --help must work without JupyterHub installed.
    block = (
        "import sys; sys.modules['jupyterhub'] = None; from hitl_nb.cli import main\n"
        "for argv in (['--help'], ['hub-service', '--help']):\n"
        "    try: main(argv)\n"
        "    except SystemExit as exit: assert exit.code == 0, exit\n"
        "print('jupyterhub' in sys.modules and sys.modules['jupyterhub'] is not None)"
    )
    done = subprocess.run(
        [sys.executable, "-c", block],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.rstrip().endswith("False"), done.stderr
    for name, trait in HubSettings.class_traits(config=True).items():
        if not trait.metadata.get("environment"):  # a credential is no flag
            assert flag_of(name, trait) in done.stdout, name
    assert "--no-push" in done.stdout and "--allowed-agent-host HOST" in done.stdout


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        pytest.param(["--max-streams", "-1"], "should not be less than 0", id="negative"),
        pytest.param(["--max-registrations", "many"], "'many' is not an int", id="not-a-number"),
        pytest.param(["--poll-interval", "nan"], "give seconds", id="nan"),
        pytest.param(["--agent-timeout", "0"], "give seconds", id="zero"),
    ],
)
def test_a_value_it_cannot_use_is_refused_naming_the_flag(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        _args(*argv)
    err = capsys.readouterr().err
    assert f"argument {argv[0]}" in err and words in err


def test_a_credential_in_the_environment_that_is_not_json_stops_the_service_naming_it(
    tmp_path: Path,
) -> None:
    secret = "https://hooks.slack.com/services/T0/B0/not-json"
    environ = {"HITL_NB_NOTIFY_TEAM_WEBHOOKS": secret}
    with pytest.raises(SystemExit) as stopped:
        options_from(_args("--state-dir", str(tmp_path)), environ)
    assert "HITL_NB_NOTIFY_TEAM_WEBHOOKS" in str(stopped.value)
    assert secret not in str(stopped.value)


def test_a_dict_setting_is_one_json_flag(capsys: pytest.CaptureFixture[str]) -> None:
    args = _args("--notify-addresses", '{"bob": "bob@example.org"}')
    assert options_from(args, {}).settings.notify_addresses == {"bob": "bob@example.org"}
    with pytest.raises(SystemExit):
        _args("--notify-addresses", "[1, 2]")
    assert "is not a JSON object" in capsys.readouterr().err
