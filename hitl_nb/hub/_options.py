"""``hitl-nb hub-service``'s options: what the administrator decides, on the command line.

The settings are declared once, as traits (:class:`HubSettings`: the gateway's settings
of :class:`hitl_nb.gateway.GatewaySettings` and the service's own); this module turns
them into the command's flags (``max_registrations`` is ``--max-registrations``, each
flag's help the trait's) and back: :func:`options_from` reads a parsed command line,
:func:`command_line` writes one, which is how :func:`hitl_nb.hub.configure` puts the
settings into the service's command. The hub starts the service with it.

Secrets never come this way (the hub shows a service's command to those who may read
it): the database URL comes from ``HITL_NB_DB_URL``, the cookie secret from
``HITL_NB_COOKIE_SECRET`` or a file in the state folder, and a setting whose value is
a credential (tagged ``environment=NAME``: the team channels' webhook URLs) from that
environment variable, as JSON (:func:`environment_of` writes it,
:func:`options_from` reads it). A ``Dict`` setting is one flag whose value is a JSON
object. Nothing here imports JupyterHub,
so ``hitl-nb --help`` works where it is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, TraitType, Unicode, default

from hitl_nb.gateway import GatewaySettings, Seconds

__all__ = [
    "COMMAND",
    "HubSettings",
    "ServiceOptions",
    "command_line",
    "environment_of",
    "flag_of",
    "options_from",
    "register_cli",
]

#: The subcommand of ``hitl-nb`` that runs the service.
COMMAND = "hub-service"

#: ``--state-dir`` when not given: this folder in the working directory.
DEFAULT_STATE_DIR = "hitl-state"


class HubSettings(GatewaySettings):
    """Settings of the hub service: the gateway's, and the service's own.

    A caller sees the prompts they may answer, those of tasks they registered, and (hub
    admins) all (``show_all`` off): each person of a hub has their own server.
    """

    push_url = Unicode(
        "",
        help=(
            "The service's URL as agents reach it, e.g. https://hub.example.org/services/"
            "hitl/; agents push to URLs under {push_url}push/. Default: the hub's public "
            "URL when it has one, else the service's own."
        ),
    ).tag(config=True)

    cache_max_age = Int(
        60,
        min=0,
        help="Seconds the hub's word on a token is kept.",
    ).tag(config=True)

    listen = Unicode(
        "",
        help="Listen at this URL instead of the hub's JUPYTERHUB_SERVICE_URL.",
    ).tag(config=True)

    notify_email_key = Unicode(
        "",
        help=(
            "Where in the hub's auth state people's email addresses are, as a dotted path "
            "(e.g. 'oauth_user.email'); asked after notify_addresses, before the template. "
            "The service then needs the scope admin:auth_state (docs/notify.md)."
        ),
    ).tag(config=True)

    @default("show_all")
    def _each_their_own(self) -> bool:
        return False

    @default("where")
    def _this_hub(self) -> str:
        return "this hub"


def _settings_of(cls: type[GatewaySettings]) -> dict[str, TraitType[Any, Any]]:
    """A settings class's settings given on the command line (its ``config=True``
    traits but those that come through the environment), by name."""
    return {
        name: trait
        for name, trait in sorted(cls.class_traits(config=True).items())
        if not trait.metadata.get("environment")
    }


def _from_environment(cls: type[GatewaySettings]) -> dict[str, str]:
    """The settings that come through the environment: name -> variable."""
    return {
        name: str(trait.metadata["environment"])
        for name, trait in sorted(cls.class_traits(config=True).items())
        if trait.metadata.get("environment")
    }


def _json_object(text: str) -> Any:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def flag_of(name: str, trait: TraitType[Any, Any]) -> str:
    """The command-line flag of a setting: a list's is in the singular, given once per
    item (``allowed_agent_hosts``: ``--allowed-agent-host``)."""
    if isinstance(trait, List):
        name = name.removesuffix("s")
    return "--" + name.replace("_", "-")


def _parse(name: str, trait: TraitType[Any, Any]) -> Callable[[str], Any]:
    """The argparse ``type`` of a setting: its text read and checked by its trait."""
    item = trait._trait if isinstance(trait, List) else trait

    def parse(text: str) -> Any:
        try:
            value = _json_object(text) if isinstance(trait, Dict) else item.from_string(text)
        except ValueError:
            if isinstance(trait, Dict):
                raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object") from None
            raise argparse.ArgumentTypeError(f"{text!r} is not {item.info()}") from None
        try:
            HubSettings(**{name: [value] if isinstance(trait, List) else value})
        except TraitError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return value

    return parse


def _default_words(trait: TraitType[Any, Any]) -> str:
    value = trait.default()
    if isinstance(trait, Bool):
        return "on" if value else "off"
    if isinstance(trait, Float):
        return f"{value:g}"
    if isinstance(trait, (Int, Enum)):
        return str(value)
    return ""  # the help says what an empty text or list means


def _help(trait: TraitType[Any, Any]) -> str:
    # argparse %-formats help texts.
    text = (trait.help or "").replace("%", "%%")
    words = _default_words(trait)
    return f"{text} (default: {words})" if words else text


def register_cli(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    run: Callable[[argparse.Namespace], int],
) -> None:
    """Add ``hitl-nb hub-service`` to the command's parser; ``run`` runs it."""
    p = sub.add_parser(
        COMMAND,
        help="run the responder gateway as a JupyterHub service (started by the hub)",
        description="The responder gateway for every user of a JupyterHub: started by the "
        "hub as a managed service (from hitl_nb.hub import configure; configure(c) in "
        "jupyterhub_config.py writes its entry). The database URL comes from HITL_NB_DB_URL.",
    )
    for name, trait in _settings_of(HubSettings).items():
        flag = flag_of(name, trait)
        # Only what is given lands in the namespace: the defaults are the traits'.
        common: dict[str, Any] = {"dest": name, "default": argparse.SUPPRESS}
        if isinstance(trait, Bool):
            action: Any = argparse.BooleanOptionalAction
            p.add_argument(flag, action=action, help=_help(trait), **common)
        elif isinstance(trait, List):
            p.add_argument(
                flag,
                action="append",
                type=_parse(name, trait),
                metavar=name.removesuffix("s").rsplit("_", 1)[-1].upper(),
                help=_help(trait) + " Repeat the flag for each.",
                **common,
            )
        elif isinstance(trait, Enum):
            p.add_argument(flag, choices=list(trait.values or ()), help=_help(trait), **common)
        elif isinstance(trait, Dict):
            p.add_argument(
                flag, type=_parse(name, trait), metavar="JSON", help=_help(trait), **common
            )
        elif isinstance(trait, (Int, Float, Unicode)):
            metavar = "SECONDS" if isinstance(trait, Seconds) else None
            metavar = "N" if isinstance(trait, Int) else metavar
            p.add_argument(
                flag, type=_parse(name, trait), metavar=metavar, help=_help(trait), **common
            )
        else:
            raise TypeError(f"HubSettings.{name}: no command-line flag for a {type(trait)}")
    p.set_defaults(func=run)


@dataclass
class ServiceOptions:
    """What the service was given: its settings (the command line) and, from the
    environment, the database URL (:func:`options_from`)."""

    settings: HubSettings
    db_url: str | None = None

    @property
    def state_dir(self) -> Path:
        """The folder of the SQLite file, the mock agent's tasks and the cookie secret."""
        return Path(self.settings.state_dir or DEFAULT_STATE_DIR).resolve()

    @property
    def push_url(self) -> str | None:
        """Where agents push to, when the administrator said (else the hub decides)."""
        return self.settings.push_url or None

    @property
    def mock_agent(self) -> bool:
        """Serve the bundled mock agent under ``mock-agent/``."""
        return bool(self.settings.mock_agent)


def options_from(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> ServiceOptions:
    """The service's options from its command line (and the environment:
    ``HITL_NB_DB_URL``, the settings tagged with a variable of their own); a variable
    that is not a JSON object stops the service, naming it (never its value)."""
    env = os.environ if environ is None else environ
    given = {name: getattr(args, name) for name in _settings_of(HubSettings) if name in args}
    for name, variable in _from_environment(HubSettings).items():
        if env.get(variable):
            try:
                given[name] = _json_object(env[variable])
            except ValueError:
                raise SystemExit(
                    f"hitl-nb hub-service: {variable} must hold a JSON object ({name})"
                ) from None
    settings = HubSettings(**given)
    settings.state_dir = str(Path(settings.state_dir or DEFAULT_STATE_DIR).resolve())
    return ServiceOptions(settings, env.get("HITL_NB_DB_URL") or None)


def _flags(name: str, trait: TraitType[Any, Any], value: Any) -> Iterator[str]:
    flag = flag_of(name, trait)
    if isinstance(trait, Bool):
        yield flag if value else "--no-" + flag[2:]
    elif isinstance(trait, List):
        for item in value:
            yield from (flag, str(item))
    elif isinstance(trait, Dict):
        yield from (flag, json.dumps(value, sort_keys=True))
    else:
        yield from (flag, repr(value) if isinstance(value, float) else str(value))


def command_line(settings: HubSettings) -> list[str]:
    """``settings`` as ``hitl-nb hub-service`` flags: those that differ from the
    defaults, ``--state-dir`` first."""
    out = ["--state-dir", settings.state_dir] if settings.state_dir else []
    for name, trait in _settings_of(HubSettings).items():
        value = getattr(settings, name)
        if name != "state_dir" and value != trait.default():
            out += _flags(name, trait, value)
    return out


def environment_of(settings: HubSettings) -> dict[str, str]:
    """The service's environment for the settings that never go on its command line
    (those that differ from the defaults), each as JSON under its variable."""
    out = {}
    for name, variable in _from_environment(HubSettings).items():
        value = getattr(settings, name)
        if value != HubSettings.class_traits()[name].default():
            out[variable] = json.dumps(value, sort_keys=True)
    return out
