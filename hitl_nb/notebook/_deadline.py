"""A prompt's deadline on the card (spec S-4: "Deadline as a soft signal").

Shown as relative time with a live countdown that runs in the browser (see
:mod:`._clock`), turning into "deadline passed" on its own. The kernel keeps its own
timer (S-4: "Orchestrators that rely on deadline ... MUST maintain their own timer"):
the follower looks at the task when the deadline passes, and whether a late answer may
still be sent follows what the agent does (it may keep the prompt open).
"""

from __future__ import annotations

from datetime import datetime, timezone

from hitl_nb._display import stable_output
from hitl_nb.spec import PromptEnvelope

from ._clock import css_countdown
from ._style import COLORS, esc

__all__ = ["deadline_html", "deadline_text", "seconds_left"]


def seconds_left(envelope: PromptEnvelope, now: datetime | None = None) -> float | None:
    """Seconds until the deadline (negative once passed); None without a deadline."""
    at = envelope.deadline_at
    if at is None:
        return None
    return (at - (now or datetime.now(timezone.utc))).total_seconds()


def _clock_time(envelope: PromptEnvelope) -> str:
    at = envelope.deadline_at
    return at.astimezone(timezone.utc).strftime("%H:%M:%S UTC") if at else ""


def deadline_html(envelope: PromptEnvelope, now: datetime | None = None, live: bool = True) -> str:
    """The deadline as a fragment of the card's header ("" without one).

    ``live=False`` (a prompt already answered or closed): the time, without a countdown.
    """
    left = seconds_left(envelope, now)
    if left is None:
        if envelope.deadline:  # present but unreadable: say what the agent wrote
            return f"deadline <code>{esc(envelope.deadline)}</code>"
        return ""
    at = esc(_clock_time(envelope))
    passed = f'<b style="color:{COLORS["error"]}">deadline passed</b> ({at})'
    if left <= 0:
        return f'<span class="hitl-deadline">{passed}</span>'
    if stable_output() or not live:
        return f'<span class="hitl-deadline">deadline at {at}</span>'
    clock = css_countdown(left, "deadline in ", passed)
    return f'<span class="hitl-deadline" title="{at}">{clock} ({at})</span>'


def deadline_text(envelope: PromptEnvelope) -> str:
    """The deadline as a line of the card's plain text ("" without one).

    The timestamp only: plain text is what nbval compares, and a relative time changes
    from run to run (the HTML card counts down live).
    """
    return f"deadline: {envelope.deadline}" if envelope.deadline else ""
