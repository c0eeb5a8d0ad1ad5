"""The names of A2A transports: protocol bindings and wire versions.

One vocabulary for the whole package. A binding is named as A2A 1.0 names it in an
interface's ``protocolBinding`` (A2A §5.6): ``"JSONRPC"``, ``"HTTP+JSON"`` or ``"GRPC"``
(gRPC for A2A 1.0, with ``hitl-nb[grpc]`` installed). A wire version is ``"1.0"`` or
``"0.3"``, the ``A2A-Version`` header's ``major.minor`` (§3.6). Where a caller may leave
the choice to the agent's card, the value ``"auto"`` is allowed as well;
:func:`binding_choice` and :func:`version_choice` check such arguments.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "BINDINGS",
    "VERSIONS",
    "A2AVersion",
    "BindingChoice",
    "BindingName",
    "VersionChoice",
    "binding_choice",
    "major_minor",
    "spoken_version",
    "version_choice",
]

#: A protocol binding this package speaks, spelled as in ``protocolBinding``.
BindingName = Literal["JSONRPC", "HTTP+JSON", "GRPC"]
#: A wire version this package speaks (``major.minor``).
A2AVersion = Literal["1.0", "0.3"]
#: A binding, or ``"auto"``: the first one the card offers that fits.
BindingChoice = Literal["auto", "JSONRPC", "HTTP+JSON", "GRPC"]
#: A wire version, or ``"auto"``: 1.0 when the card offers it, else 0.3.
VersionChoice = Literal["auto", "1.0", "0.3"]

#: The bindings spoken, in the order they are listed in messages.
BINDINGS: tuple[BindingName, ...] = get_args(BindingName)
#: The wire versions spoken, preferred first.
VERSIONS: tuple[A2AVersion, ...] = get_args(A2AVersion)


def major_minor(version: str) -> str:
    """``"0.3.1"`` -> ``"0.3"``; surrounding spaces dropped."""
    return ".".join(version.strip().split(".")[:2])


def spoken_version(version: str) -> A2AVersion | None:
    """The wire version a version string names, or None when it is not spoken here."""
    mm = major_minor(version)
    for spoken in VERSIONS:
        if mm == spoken:
            return spoken
    return None


def binding_choice(value: str) -> BindingChoice:
    """A ``binding=`` argument checked: ``"auto"``, ``"JSONRPC"``, ``"HTTP+JSON"`` or ``"GRPC"``.

    Case does not matter (``"jsonrpc"`` is ``"JSONRPC"``); anything else raises
    ``ValueError`` naming the allowed values.
    """
    wanted = value.upper() if isinstance(value, str) else value
    if wanted == "AUTO":
        return "auto"
    for name in BINDINGS:
        if wanted == name:
            return name
    raise ValueError(f"binding must be 'auto', 'JSONRPC', 'HTTP+JSON' or 'GRPC', got {value!r}")


def version_choice(value: str) -> VersionChoice:
    """A ``version=`` argument checked: ``"auto"``, ``"1.0"`` or ``"0.3"``.

    A patch version names its ``major.minor`` (``"0.3.0"`` is ``"0.3"``); anything else
    raises ``ValueError`` naming the allowed values.
    """
    if value == "auto":
        return "auto"
    spoken = spoken_version(value) if isinstance(value, str) else None
    if spoken is None:
        raise ValueError(f"version must be 'auto', '1.0' or '0.3', got {value!r}")
    return spoken
