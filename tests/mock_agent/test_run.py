"""Serving the mock agent (hitl_nb.mock_agent._run): its handlers mounted under a prefix in
someone else's tornado app, and a MockAgent's life on its own thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
import tornado.web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from hitl_nb.mock_agent import MockAgent, mock_agent_handlers
from tests.helpers.mock_agent_client import Wire, envelope_of
from tests.helpers.until import until


class Hello(tornado.web.RequestHandler):
    def get(self) -> None:
        self.write("host app")


@pytest.fixture()
def host_url() -> Iterator[str]:
    ready = threading.Event()
    state: dict[str, object] = {}

    def run() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        # xsrf_cookies on, as in a Jupyter server: the agent's POSTs must still work.
        app = tornado.web.Application([(r"/", Hello)], xsrf_cookies=True)
        app.add_handlers(r".*", mock_agent_handlers("/hitl/agent/", faults=["no-echo"]))
        sockets = bind_sockets(0, "127.0.0.1")
        server = HTTPServer(app)
        server.add_sockets(sockets)
        state.update(loop=loop, server=server, port=sockets[0].getsockname()[1])
        ready.set()
        loop.run_forever()
        server.stop()
        loop.run_until_complete(server.close_all_connections())
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    yield f"http://127.0.0.1:{state['port']}"
    loop = state["loop"]
    assert isinstance(loop, asyncio.AbstractEventLoop)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def test_mounted_under_a_prefix(host_url: str) -> None:
    base = host_url + "/hitl/agent"
    wire = Wire(base)
    card = wire.http.get(base + "/.well-known/agent-card.json").json()
    assert [i["url"] for i in card["supportedInterfaces"]] == [base + "/", base]
    task = wire.start()
    pid = envelope_of(task)["prompt_id"]
    r, body = wire.answer(task["id"], pid, {"approve": True})
    assert body["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "A2A-Extensions" not in r.headers  # the faults reached the mounted agent
    rest = wire.http.get(f"{base}/tasks/{task['id']}").json()
    assert rest["id"] == task["id"]
    assert wire.http.get(host_url + "/").text == "host app"
    assert wire.http.get(host_url + "/hitl/agent/nothing").status_code == 404
    # Deadlines fire in a mounted agent too (it binds to the host's loop).
    late = wire.start("deadline", deadline_seconds=0.05, on_deadline="fail")
    until(
        lambda: wire.get_task(late["id"])["status"]["state"] == "TASK_STATE_FAILED",
        timeout=30,
        what="the deadline to fail the task",
        interval=0.01,
    )
    wire.close()


def test_lifecycle_errors_and_stop_from_the_agent_thread() -> None:
    agent = MockAgent()
    with pytest.raises(RuntimeError, match="not running"):
        _ = agent.url
    with pytest.raises(ValueError, match="on_deadline"):
        MockAgent(on_deadline="never")
    agent.start()
    with pytest.raises(RuntimeError, match="already started"):
        agent.start()
    assert agent._loop is not None and agent._thread is not None
    agent._loop.call_soon_threadsafe(agent.stop)  # e.g. a scenario stopping its agent
    agent._thread.join(5)
    assert not agent.running
    agent.stop()  # idempotent


def test_port_in_use_is_reported_by_start() -> None:
    with MockAgent() as first:
        with pytest.raises(OSError):
            MockAgent(port=first.port).start()
