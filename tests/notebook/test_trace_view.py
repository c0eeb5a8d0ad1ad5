"""The wire trace in a notebook: the timeline widget, Conversation.trace, report.trace."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing

import pytest

from hitl_nb import _display
from hitl_nb.client import Exchange, SyncHitlClient, Trace
from hitl_nb.conformance import Settings, run
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation, TraceView
from hitl_nb.notebook._style import COLORS
from hitl_nb.notebook._trace_view import MAX_ROWS, trace_html

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def test_a_conversation_keeps_its_trace_and_shows_it_as_a_widget(agent: MockAgent) -> None:
    with closing(Conversation.start(agent.url, {"scenario": "approval"}, trace=True)) as chat:
        chat.answer({"approve": "maybe"}, validate=False)
        chat.answer({"approve": True}).raise_for_status()
        trace = chat.trace
        assert trace is not None and trace[0].what == "agent card"
        assert {"SendMessage", "SendStreamingMessage"} & {ex.what for ex in trace}
        bundle = trace._repr_mimebundle_()
    assert WIDGET in bundle
    assert bundle["text/plain"].startswith("#1 GET /.well-known/agent-card.json (agent card) 200")
    assert "422 hitl_response_invalid" in bundle["text/plain"]
    html = trace_html(trace)
    assert html.count("<details") == len(trace)
    assert f"border-left:4px solid {COLORS['warn']}" in html  # the 422, highlighted
    assert "&quot;hitl_response_for&quot;" in html  # JSON pretty-printed and escaped
    assert "A2A-Extensions" in html


def test_agent_text_is_escaped_and_errors_are_red() -> None:
    trace = Trace()
    ex = trace.begin("POST", "http://127.0.0.1:1/", "SendMessage", [], b'{"a": "<b>x</b>"}')
    trace.answered(ex, 500, [("content-type", "application/json")])
    trace.body(ex, b'{"error": {"code": -32603, "message": "<script>alert(1)</script>"}}')
    gone = trace.begin("GET", "http://127.0.0.1:1/tasks/1", "GetTask", [], b"")
    trace.failed(gone, ConnectionError("refused <now>"))
    html = trace_html(trace)
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>x</b>" not in html
    assert html.count(f"border-left:4px solid {COLORS['error']}") >= 2
    assert "no answer" in html and "refused &lt;now&gt;" in html
    assert isinstance(ex, Exchange) and ex.failed and ex.hitl_error is None


def test_stable_output_leaves_timings_out() -> None:
    trace = Trace()
    ex = trace.begin("GET", "http://127.0.0.1:1/x", "GetTask", [], b"")
    trace.answered(ex, 200, [])
    trace.event(ex, "1", '{"ok": true}')
    trace.done(ex)
    assert " ms" in trace_html(trace)
    try:
        _display.set_stable_output(True)
        assert " ms" not in trace_html(trace) and " ms" not in trace.to_text()
    finally:
        _display.set_stable_output(None)


def test_the_view_is_bounded_and_refreshes() -> None:
    trace = Trace()
    view = TraceView(trace)
    assert "(nothing yet)" in view.html.value
    for i in range(MAX_ROWS + 5):
        trace.done(trace.begin("GET", f"http://127.0.0.1:1/tasks/{i}", "GetTask", [], b""))
    view.refresh_button.click()
    assert view.html.value.count("<details") == MAX_ROWS
    assert "the 5 oldest are not drawn here" in view.html.value


def test_the_sync_client_trace_displays_too(agent: MockAgent) -> None:
    with SyncHitlClient(agent.url, trace=True) as client:
        client.send("approval")
        assert client.trace is not None and WIDGET in client.trace._repr_mimebundle_()


def test_the_conformance_run_records_every_exchange(agent: MockAgent) -> None:
    fast = Settings(trials=2, transition_timeout=0.5, resume_timeout=1.5, replay_timeout=2.0)
    report = run(agent.url, only=["CF-6"], settings=fast, trace=True)
    assert report.passed, report.to_text()
    trace = report.trace
    assert isinstance(trace, Trace)
    whats = [ex.what for ex in trace]
    assert whats[0] == "agent card"
    assert "SubscribeToTask (raw)" in whats  # the harness's own raw requests too
    raw = next(ex for ex in trace if ex.what == "SubscribeToTask (raw)")
    assert raw.streamed and raw.events and raw.duration_ms is not None
    assert run(agent.url, only=["EXT-CARD"], settings=fast).trace is None


def test_a_trace_shows_as_a_widget_when_only_the_client_was_imported() -> None:
    # The notebook layer loads lazily; a script that imports only hitl_nb.client must still
    # see the timeline (not the plain text) when it displays client.trace.
    code = (
        "import sys\n"
        "from hitl_nb.client import Trace\n"
        "assert 'hitl_nb.notebook' not in sys.modules\n"
        "bundle = Trace()._repr_mimebundle_()\n"
        "print(sorted(bundle))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "application/vnd.jupyter.widget-view+json" in done.stdout
