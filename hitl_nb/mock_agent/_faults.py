"""Fault modes: deliberate spec violations, for negative tests of a conformance harness.

All are off by default. Each has one name, the same in Python and on the command line
(``--fault NAME``, repeatable; ``slow-resume`` takes ``=MS``):

==========================  ==============================================================
``reuse-prompt-ids``        every prompt gets the same prompt_id (breaks S-5)
``accept-duplicates``       a second answer to an answered prompt is accepted (breaks CF-1)
``slow-resume=MS``          the task leaves INPUT_REQUIRED only MS ms after acceptance
``no-replay``               Last-Event-ID is ignored and snapshots omit the envelope (CF-6)
``422-without-errors``      a 422 / -32011 carries no ``validation_errors``
``envelope-without-activation``  the envelope is sent to clients that did not activate
``oversize-schema``         response_schema is padded past 64 KiB (breaks S-2)
``no-echo``                 the A2A-Extensions response header is never echoed
``never-resume``            an accepted answer never moves the task out of INPUT_REQUIRED
==========================  ==============================================================
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["FAULT_NAMES", "Faults"]

FAULT_NAMES: tuple[str, ...] = (
    "reuse-prompt-ids",
    "accept-duplicates",
    "slow-resume",
    "no-replay",
    "422-without-errors",
    "envelope-without-activation",
    "oversize-schema",
    "no-echo",
    "never-resume",
)


@dataclass(frozen=True)
class Faults:
    """Which fault modes are on. Build from names with :meth:`parse`."""

    reuse_prompt_ids: bool = False
    accept_duplicates: bool = False
    slow_resume_ms: float = 0.0
    no_replay: bool = False
    errors_422_without_list: bool = False
    envelope_without_activation: bool = False
    oversize_schema: bool = False
    no_echo: bool = False
    never_resume: bool = False

    @classmethod
    def parse(cls, names: Iterable[str] | None) -> Faults:
        """Faults from names such as ``["no-echo", "slow-resume=250"]``.

        Raises ``ValueError`` naming an unknown fault or a bad ``slow-resume`` value.
        """
        on: dict[str, bool | float] = {}
        for raw in names or ():
            name, _, arg = str(raw).strip().partition("=")
            if name not in FAULT_NAMES:
                raise ValueError(f"unknown fault {name!r}; known faults: {', '.join(FAULT_NAMES)}")
            if name == "slow-resume":
                try:
                    ms = float(arg)
                except ValueError:
                    raise ValueError(
                        f"fault slow-resume needs a delay in milliseconds, e.g. "
                        f"slow-resume=250; got {raw!r}"
                    ) from None
                if not ms > 0 or ms > 3_600_000:
                    raise ValueError("fault slow-resume needs 0 < MS <= 3600000")
                on["slow_resume_ms"] = ms
                continue
            if arg:
                raise ValueError(f"fault {name!r} takes no value; got {raw!r}")
            attr = {"422-without-errors": "errors_422_without_list"}.get(
                name, name.replace("-", "_")
            )
            on[attr] = True
        return cls(**on)  # type: ignore[arg-type]

    def names(self) -> list[str]:
        """The faults that are on, spelled as :meth:`parse` reads them."""
        out = []
        for name in FAULT_NAMES:
            if name == "slow-resume":
                if self.slow_resume_ms:
                    out.append(f"slow-resume={self.slow_resume_ms:g}")
                continue
            attr = {"422-without-errors": "errors_422_without_list"}.get(
                name, name.replace("-", "_")
            )
            if getattr(self, attr):
                out.append(name)
        return out

    def __bool__(self) -> bool:
        return bool(self.names())
