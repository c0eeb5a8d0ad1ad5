"""Regression-test an agent's hitl-prompt/v1 side from pytest and from notebooks.

- The nbval sanitize file shipped in the package: :func:`sanitize_file` (or
  ``hitl-nb nbval-sanitize``, or ``pytest --nbval --hitl-nbval``), which makes UUIDs,
  timestamps, loopback ports, durations and addresses compare equal across runs.
- :func:`stable_output`: renderings without timings, so committed notebook outputs
  match on every run.
- :class:`Transcript`: record a conversation with an agent to JSON, replay it against
  a live agent (the first difference in states, prompts, schemas or errors), or serve
  it as a scripted mock agent.
- pytest fixtures ``mock_agent``, ``hitl_agent_url``, ``hitl_client`` and
  ``conversation`` (see :mod:`hitl_nb.testing.pytest_plugin`), offered by hitl-nb's
  pytest plugin.
"""

import typing

from hitl_nb import _lazy
from hitl_nb._display import STABLE_OUTPUT_ENV

from ._sanitize import sanitize, sanitize_file, sanitize_patterns, write_sanitize_file

if typing.TYPE_CHECKING:  # at run time these load their module on first use (PEP 562)
    from ._cli import register as register_cli
    from ._stable import stable_output
    from ._transcript import Difference, Replay, Transcript, TranscriptError

__all__ = [
    "STABLE_OUTPUT_ENV",
    "Difference",
    "Replay",
    "Transcript",
    "TranscriptError",
    "register_cli",
    "sanitize",
    "sanitize_file",
    "sanitize_patterns",
    "stable_output",
    "write_sanitize_file",
]

# Lazy, so that pytest loading the fixtures (pytest_plugin, in this package) for every
# run of anyone who has hitl-nb installed costs nothing until a test asks for one.
__getattr__, __dir__ = _lazy.attach(
    __name__,
    {
        "register_cli": "_cli:register",
        "stable_output": "_stable",
        "Difference": "_transcript",
        "Replay": "_transcript",
        "Transcript": "_transcript",
        "TranscriptError": "_transcript",
    },
)
