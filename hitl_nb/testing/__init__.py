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

# The public table (see hitl_nb._lazy): each name loads its module on first use, so that
# pytest loading the fixtures (pytest_plugin, in this package) for every run of anyone
# who has hitl-nb installed costs nothing until a test asks for one.
if typing.TYPE_CHECKING:
    from .._display import STABLE_OUTPUT_ENV as STABLE_OUTPUT_ENV
    from ._cli import register_cli as register_cli
    from ._sanitize import sanitize as sanitize
    from ._sanitize import sanitize_file as sanitize_file
    from ._sanitize import sanitize_patterns as sanitize_patterns
    from ._sanitize import write_sanitize_file as write_sanitize_file
    from ._stable import stable_output as stable_output
    from ._transcript import Difference as Difference
    from ._transcript import Replay as Replay
    from ._transcript import Transcript as Transcript
    from ._transcript import TranscriptError as TranscriptError

__getattr__, __dir__, __all__ = _lazy.attach_table(__name__, __file__)
