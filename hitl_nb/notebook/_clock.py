"""Clocks that tick in the browser and cost the kernel nothing.

A card shows "deadline in 4 min 12 s" and "working for 35 s" while it is on screen.
Ticking them from the kernel would send a widget message every second per card for
as long as the notebook is open. Instead the HTML carries a CSS animation of a
registered integer custom property (``@property``), rendered with CSS counters: the
browser counts, the kernel sends the HTML once and is not woken again. Core ipywidgets
only (an ``HTML`` widget), no front-end code.

The kernel re-renders a clock when something changes (a new state, the deadline
passing), which also corrects any drift. Without ``@property`` support (older
browsers) the clock shows its starting value, which is still true when drawn.
"""

from __future__ import annotations

import uuid

from hitl_nb._words import duration

__all__ = ["css_countdown", "css_elapsed"]

_DAY = 24 * 3600


def _clock(start: int, end: int, duration: int, delay: int, after: str | None) -> str:
    uid = uuid.uuid4().hex[:10]
    prop, name = f"--hitl-s-{uid}", f"hitl-clock-{uid}"
    minutes, rest = f"--hitl-m-{uid}", f"--hitl-r-{uid}"
    # Integer custom properties round: (s - 30) / 60 rounds to floor(s / 60).
    css = (
        f"@property {prop}{{syntax:'<integer>';inherits:true;initial-value:{start}}}"
        f"@property {minutes}{{syntax:'<integer>';inherits:true;initial-value:0}}"
        f"@property {rest}{{syntax:'<integer>';inherits:true;initial-value:0}}"
        f"@keyframes {name}{{from{{{prop}:{start}}}to{{{prop}:{end}}}}}"
        f".{name}{{{prop}:{end};animation:{name} {duration}s linear {-delay}s 1 forwards;"
        f"{minutes}:calc((var({prop}) - 30) / 60);{rest}:calc(var({prop}) - var({minutes}) * 60)}}"
        f".{name} .hitl-clock-m::after{{counter-reset:m var({minutes});content:counter(m)}}"
        f".{name} .hitl-clock-s::after{{counter-reset:s var({rest});content:counter(s)}}"
    )
    body = (
        '<span class="hitl-clock-m"></span> min <span class="hitl-clock-s"></span> s'
        if start >= 60 or end >= 60
        else '<span class="hitl-clock-s"></span> s'
    )
    tail = ""
    if after is not None:
        # The "after" text replaces the clock when the animation ends.
        css += (
            f"@keyframes {name}-hide{{to{{max-width:0}}}}"
            f"@keyframes {name}-show{{to{{max-width:40em}}}}"
            f".{name}-live{{display:inline-block;max-width:40em;overflow:hidden;"
            f"white-space:nowrap;vertical-align:bottom;"
            f"animation:{name}-hide 0s linear {duration - delay}s forwards}}"
            f".{name}-after{{display:inline-block;max-width:0;overflow:hidden;"
            f"white-space:nowrap;vertical-align:bottom;"
            f"animation:{name}-show 0s linear {duration - delay}s forwards}}"
        )
        body = f'<span class="{name}-live">{{prefix}}{body}</span>'
        tail = f'<span class="{name}-after">{after}</span>'
    else:
        body = "{prefix}" + body
    return f'<style>{css}</style><span class="{name} hitl-clock">{body}{tail}</span>'


def css_countdown(remaining: float, prefix: str, after: str) -> str:
    """HTML counting down from ``remaining`` seconds, then showing ``after``.

    ``prefix`` and ``after`` are HTML (escape what came from elsewhere). Over an hour
    the countdown is static, in words (:func:`hitl_nb._words.duration`, re-rendered by
    the kernel on each change).
    """
    seconds = max(0, int(remaining))
    if seconds >= 3600:
        return f'<span class="hitl-clock">{prefix}{duration(seconds)}</span>'
    return _clock(seconds, 0, seconds, 0, after).replace("{prefix}", prefix)


def css_elapsed(elapsed: float, prefix: str) -> str:
    """HTML counting up from ``elapsed`` seconds, for up to a day."""
    start = max(0, int(elapsed))
    if start >= _DAY:
        return f'<span class="hitl-clock">{prefix}{duration(start)}</span>'
    return _clock(0, _DAY, _DAY, start, None).replace("{prefix}", prefix)
