"""The wire trace in a notebook: a collapsible timeline, one row per exchange.

``client.trace`` (and ``conversation.trace``, ``report.trace``) shows as this widget:
a line per request (method, path, what, status, the hitl error or HTTP error
highlighted, timing), which opens to the A2A headers both ways and the JSON of the
request, the answer and each server-sent event, pretty-printed. Built from core
ipywidgets (an ``HTML`` widget with ``<details>`` rows and a refresh button), so it works
in every front end; everything shown is escaped (S-1: what an agent sends is data).

The widget draws at most the newest ``MAX_ROWS`` exchanges and ``MAX_CHARS`` characters
of each body; the trace itself (and its JSON / HAR exports) keeps more.
"""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as W

from hitl_nb._display import stable_output
from hitl_nb.client import Exchange, Trace

from ._style import COLORS, MUTED, esc

__all__ = ["MAX_CHARS", "MAX_ROWS", "TraceView", "trace_html"]

MAX_ROWS = 200
MAX_CHARS = 20_000
_HEADERS = ("A2A-Version", "A2A-Extensions", "X-A2A-Extensions", "Last-Event-ID", "Content-Type")
_MONO = "font-family:var(--jp-code-font-family, monospace);font-size:var(--jp-code-font-size, 12px)"
_PRE = (
    f"{_MONO};white-space:pre-wrap;word-break:break-all;margin:2px 0 6px 0;padding:4px 6px;"
    "background:var(--jp-layout-color2, #f5f5f5);color:var(--jp-content-font-color1, #111);"
    "border-radius:3px;max-height:24em;overflow:auto"
)


def _json(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + f"\n… ({len(text) - MAX_CHARS} more characters in the trace)"
    return text


def _kind(ex: Exchange) -> str:
    if ex.hitl_error is not None:
        return "warn"
    return "error" if ex.failed else "ok"


def _path(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"


def _row(ex: Exchange) -> str:
    kind = _kind(ex)
    color = COLORS[kind]
    status = esc(ex.status) if ex.status is not None else "no answer"
    badges = []
    if ex.hitl_error:
        code, _, reason = ex.hitl_error.partition(" ")
        shown = reason if code == str(ex.status) else ex.hitl_error  # "422 422 ..." reads badly
        badges.append(f'<b style="color:{COLORS["warn"]}">{esc(shown)}</b>')
    elif ex.failed and ex.error is None:
        badges.append(f'<b style="color:{COLORS["error"]}">error</b>')
    if ex.error:
        badges.append(f'<b style="color:{COLORS["error"]}">{esc(ex.error[:200])}</b>')
    if ex.streamed:
        badges.append(f"{len(ex.events)} event(s)")
    if ex.duration_ms is not None and not stable_output():
        badges.append(f'<span style="color:{MUTED}">{ex.duration_ms:.1f} ms</span>')
    summary = (
        f'<summary style="cursor:pointer;{_MONO};border-left:4px solid {color};'
        f'padding:2px 6px;margin:1px 0">'
        f'<span style="color:{MUTED}">#{ex.number}</span> <b>{esc(ex.method)}</b> '
        f"{esc(_path(ex.url))} <i>{esc(ex.what)}</i> "
        f'<b style="color:{color}">{status}</b> {" · ".join(badges)}</summary>'
    )
    body = [f'<div style="{_MONO};color:{MUTED}">{esc(ex.url)} · {esc(ex.started_at)}</div>']
    heads = []
    for side, arrow in (("request", "→"), ("response", "←")):
        for name in _HEADERS:
            value = ex.header(name, side)
            if value is not None:
                heads.append(f"{arrow} {esc(name)}: {esc(value)}")
    if heads:
        body.append(f'<div style="{_MONO}">{"<br>".join(heads)}</div>')
    if ex.request_json is not None:
        body.append(f"<div>request</div><pre style='{_PRE}'>{esc(_json(ex.request_json))}</pre>")
    if ex.response_json is not None:
        body.append(f"<div>answer</div><pre style='{_PRE}'>{esc(_json(ex.response_json))}</pre>")
    for event in ex.events:
        label = f"event {esc(event.event_id)}" if event.event_id is not None else "event"
        if not stable_output():
            label += f' <span style="color:{MUTED}">+{event.at_ms:.1f} ms</span>'
        body.append(f"<div>{label}</div><pre style='{_PRE}'>{esc(_json(event.data))}</pre>")
    for note in ex.notes:
        body.append(f'<div style="color:{COLORS["warn"]}">note: {esc(note)}</div>')
    inner = f'<div style="padding:2px 0 4px 14px">{"".join(body)}</div>'
    return f'<details style="margin:0">{summary}{inner}</details>'


def trace_html(trace: Trace) -> str:
    """The timeline as HTML (escaped; theme colours)."""
    exchanges = trace.exchanges
    head = f"<b>Wire trace</b>: {len(exchanges)} exchange(s)"
    hidden = len(exchanges) - MAX_ROWS
    if trace.dropped:
        head += f" ({trace.dropped} older dropped)"
    if hidden > 0:
        head += f"; the {hidden} oldest are not drawn here (see to_text(), write_har())"
        exchanges = exchanges[-MAX_ROWS:]
    legend = " ".join(
        f'<span style="border-left:4px solid {COLORS[k]};padding-left:4px;margin-right:8px">'
        f"{label}</span>"
        for k, label in (("ok", "ok"), ("warn", "hitl 409 / 422"), ("error", "error"))
    )
    rows = (
        "".join(_row(ex) for ex in exchanges) or f'<div style="color:{MUTED}">(nothing yet)</div>'
    )
    return (
        f'<div class="hitl-trace" style="color:var(--jp-ui-font-color1, #222)">'
        f'<div style="margin-bottom:4px">{head} <span style="font-size:smaller">{legend}</span>'
        f"</div>{rows}</div>"
    )


class TraceView:
    """The widget: the timeline and a button that redraws it (the trace keeps growing)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.html = W.HTML(value=trace_html(trace))
        self.html.add_class("hitl-trace-view")
        self.refresh_button = W.Button(description="Refresh", icon="refresh", tooltip="Redraw")
        self.refresh_button.layout.width = "auto"
        self.refresh_button.on_click(lambda _button: self.refresh())
        self.widget = W.VBox([self.refresh_button, self.html])

    def refresh(self) -> None:
        """Draw the exchanges recorded since."""
        self.html.value = trace_html(self.trace)
