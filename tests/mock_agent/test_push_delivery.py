"""Push-notification delivery (hitl_nb.mock_agent._push_delivery): token,
authentication, body per version, retries, no redirects, a slow receiver that does not
hold the agent up, and the A2A TCK's delivery flow. Receivers are TinyServers on
127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.mock_agent_client import Wire, user_message
from tests.helpers.ports import free_port
from tests.helpers.tiny_server import Conn, Request, TinyServer
from tests.helpers.until import until


def ok(request: Request, conn: Conn) -> None:
    conn.answer({}, 200)


@pytest.fixture()
def agent() -> Iterator[MockAgent]:
    with MockAgent(push_backoff=0.05, push_retries=4, push_timeout=5) as a:
        yield a


@pytest.fixture()
def wire(agent: MockAgent) -> Iterator[Wire]:
    w = Wire(agent.url)
    yield w
    w.close()


@pytest.fixture()
def receiver() -> Iterator[TinyServer]:
    server = TinyServer(ok).start()
    yield server
    server.stop()


def _prompt_id(task: dict[str, Any]) -> str:
    meta = task["status"]["message"]["metadata"]
    return str(next(iter(meta.values()))["prompt_id"])


def test_delivery_v1_headers_body_and_order(wire: Wire, receiver: TinyServer) -> None:
    """SendMessage with a webhook: every update as a StreamResponse, in order."""
    msg = user_message([{"text": "approval"}])
    config = {
        "taskPushNotificationConfig": {
            "url": receiver.url + "/hook",
            "token": "tok-1",
            "authentication": {"scheme": "Bearer", "credentials": "cred-1"},
        }
    }
    task = wire.result("SendMessage", {"message": msg, "configuration": config})["task"]
    until(lambda: len(receiver.requests) >= 3, what="three notifications")
    first = receiver.requests[0]
    assert first.method == "POST" and first.path == "/hook"
    assert first.header("X-A2A-Notification-Token") == "tok-1"
    assert first.header("A2A-Notification-Token") == "tok-1"
    assert first.header("Authorization") == "Bearer cred-1"
    assert first.header("Content-Type") == "application/a2a+json"
    bodies = [r.json() for r in receiver.requests]
    assert list(bodies[0]) == ["task"] and bodies[0]["task"]["id"] == task["id"]
    states = [b["statusUpdate"]["status"]["state"] for b in bodies[1:3]]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"]
    # The envelope rides along: the request that configured push activated the extension.
    assert _prompt_id({"status": bodies[2]["statusUpdate"]["status"]}) == _prompt_id(task)
    # The answer's updates follow, still in order.
    r, body = wire.answer(task["id"], _prompt_id(task), {"approve": True})
    assert "result" in body, body
    until(
        lambda: any(
            r.json().get("statusUpdate", {}).get("status", {}).get("state")
            == "TASK_STATE_COMPLETED"
            for r in receiver.requests
        ),
        what="the completed update",
    )
    states = [
        r.json()["statusUpdate"]["status"]["state"]
        for r in receiver.requests
        if "statusUpdate" in r.json()
    ]
    assert states[:3] == ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING"]
    assert states[-1] == "TASK_STATE_COMPLETED"


def test_delivery_without_activation_carries_no_envelope(wire: Wire, receiver: TinyServer) -> None:
    tid = wire.start("multi-step")["id"]
    _, body = wire.rpc(
        "CreateTaskPushNotificationConfig",
        {"taskId": tid, "url": receiver.url + "/h"},
        activated=False,
    )
    assert "result" in body
    task = wire.get_task(tid)
    wire.answer(tid, _prompt_id(task), {"name": "v2"})
    until(
        lambda: any(
            r.json().get("statusUpdate", {}).get("status", {}).get("state")
            == "TASK_STATE_INPUT_REQUIRED"
            for r in receiver.requests
        ),
        what="the next prompt's update",
    )
    for r in receiver.requests:
        assert "hitl-prompt" not in r.body.decode(), r.body[:300]
        assert r.header("X-A2A-Notification-Token") is None
        assert r.header("Authorization") is None


def test_delivery_v03_posts_the_task(wire: Wire, receiver: TinyServer) -> None:
    tid = wire.start("approval")["id"]
    wire.result(
        "tasks/pushNotificationConfig/set",
        {"taskId": tid, "pushNotificationConfig": {"url": receiver.url + "/h", "token": "t3"}},
        version=None,
    )
    _, body = wire.rpc("tasks/cancel", {"id": tid}, version=None)
    assert "result" in body, body
    got = until(lambda: receiver.requests, what="a notification")
    assert got[0].header("Content-Type") == "application/json"
    assert got[0].header("X-A2A-Notification-Token") == "t3"
    task = got[0].json()
    assert task["kind"] == "task" and task["id"] == tid
    assert task["status"]["state"] == "canceled"


def test_retries_until_the_receiver_is_up(wire: Wire, agent: MockAgent) -> None:
    """Receiver down (connection refused), then up: the update arrives, after retries."""
    assert agent.core is not None
    port = free_port()
    tid = wire.start("approval")["id"]
    wire.result(
        "CreateTaskPushNotificationConfig",
        {"taskId": tid, "url": f"http://127.0.0.1:{port}/late", "token": "t"},
    )
    wire.rpc("CancelTask", {"id": tid})
    until(lambda: agent.core.push.sender.failures >= 1, what="a failed attempt")  # type: ignore[union-attr]
    late = TinyServer(ok, port=port).start()
    try:
        got = until(lambda: late.requests, what="the retried notification")
        assert got[0].json()["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
        outcome = until(
            lambda: [d for d in agent.core.push.sender.log if d.delivered],  # type: ignore[union-attr]
            what="the delivery record",
        )
        assert outcome[0].attempts >= 2
    finally:
        late.stop()


def test_retries_are_bounded_and_5xx_is_retried(wire: Wire, agent: MockAgent) -> None:
    assert agent.core is not None
    down = TinyServer(lambda req, conn: conn.answer({}, 503)).start()
    try:
        tid = wire.start("approval")["id"]
        wire.result("CreateTaskPushNotificationConfig", {"taskId": tid, "url": down.url + "/x"})
        wire.rpc("CancelTask", {"id": tid})
        done = until(lambda: list(agent.core.push.sender.log), what="the give-up")  # type: ignore[union-attr]
        assert done[0].delivered is False and done[0].status == 503
        assert done[0].attempts == 5  # the first try and push_retries=4 more
        assert len(down.requests) == 5
    finally:
        down.stop()


def test_redirects_are_not_followed_nor_4xx_retried(wire: Wire, agent: MockAgent) -> None:
    assert agent.core is not None
    target = TinyServer(ok).start()
    redirect = TinyServer(lambda r, c: c.answer({}, 307, Location=target.url + "/stolen")).start()
    refuse = TinyServer(lambda r, c: c.answer({}, 401)).start()
    try:
        tid = wire.start("approval")["id"]
        for url in (redirect.url + "/r", refuse.url + "/f"):
            wire.result("CreateTaskPushNotificationConfig", {"taskId": tid, "url": url})
        wire.rpc("CancelTask", {"id": tid})
        done = until(
            lambda: len(agent.core.push.sender.log) >= 2 and list(agent.core.push.sender.log),  # type: ignore[union-attr]
            what="both outcomes",
        )
        by_status = {d.status: d for d in done}
        assert by_status[307].attempts == 1 and not by_status[307].delivered
        assert "redirect" in (by_status[307].error or "")
        assert by_status[401].attempts == 1 and not by_status[401].delivered
        assert target.requests == [] and len(redirect.requests) == len(refuse.requests) == 1
    finally:
        for s in (target, redirect, refuse):
            s.stop()


def test_a_stalled_receiver_holds_nobody_up(wire: Wire, agent: MockAgent) -> None:
    """While one webhook hangs, the agent serves requests and other webhooks get theirs."""
    release = threading.Event()

    def stall(request: Request, conn: Conn) -> None:
        release.wait(20)
        conn.answer({}, 200)

    slow = TinyServer(stall).start()
    fast = TinyServer(ok).start()
    try:
        tid = wire.start("approval")["id"]
        wire.result("CreateTaskPushNotificationConfig", {"taskId": tid, "url": slow.url + "/s"})
        wire.result("CreateTaskPushNotificationConfig", {"taskId": tid, "url": fast.url + "/f"})
        wire.rpc("CancelTask", {"id": tid})
        until(lambda: slow.requests, what="the stalled receiver to be called")
        until(lambda: fast.requests, what="the other receiver's notification")
        # The agent still answers while the stalled delivery is open.
        other = wire.start("approval")
        assert other["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert not release.is_set()
    finally:
        release.set()
        slow.stop()
        fast.stop()


def test_deleted_config_gets_nothing_more(wire: Wire, receiver: TinyServer) -> None:
    tid = wire.start("approval")["id"]
    made = wire.result(
        "CreateTaskPushNotificationConfig", {"taskId": tid, "url": receiver.url + "/h"}
    )
    wire.result("DeleteTaskPushNotificationConfig", {"taskId": tid, "id": made["id"]})
    keep = TinyServer(ok).start()
    try:
        wire.result("CreateTaskPushNotificationConfig", {"taskId": tid, "url": keep.url + "/k"})
        wire.rpc("CancelTask", {"id": tid})
        until(lambda: keep.requests, what="the kept webhook's notification")
        assert receiver.requests == []
    finally:
        keep.stop()


def test_oversize_update_is_not_sent(receiver: TinyServer) -> None:
    with MockAgent(push_backoff=0.01) as agent:
        assert agent.core is not None
        agent.core.push.sender.settings = type(agent.core.push.settings)(max_body=200)
        w = Wire(agent.url)
        try:
            tid = w.start("approval")["id"]
            w.result("CreateTaskPushNotificationConfig", {"taskId": tid, "url": receiver.url})
            w.rpc("CancelTask", {"id": tid})
            done = until(lambda: list(agent.core.push.sender.log), what="the refusal")  # type: ignore[union-attr]
            assert done[0].error == "body over the size limit" and done[0].attempts == 0
            assert receiver.requests == []
        finally:
            w.close()


def test_stop_with_a_delivery_in_flight_returns() -> None:
    """Stopping the agent while a webhook hangs ends the delivery (nothing left running)."""
    release = threading.Event()
    slow = TinyServer(lambda r, c: (release.wait(20), c.answer({}, 200))).start()  # type: ignore[func-returns-value]
    try:
        agent = MockAgent().start()
        w = Wire(agent.url)
        tid = w.start("approval")["id"]
        w.result("CreateTaskPushNotificationConfig", {"taskId": tid, "url": slow.url})
        w.rpc("CancelTask", {"id": tid})
        until(lambda: slow.requests, what="the hanging delivery")
        w.close()
        agent.stop()
        assert not agent.running
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{agent.port}/", timeout=2)
    finally:
        release.set()
        slow.stop()


# -- what the A2A TCK sends (its push tests, run here without the TCK) -------------------


def test_the_tck_flow_inline_config_on_a_tck_task(wire: Wire, receiver: TinyServer) -> None:
    """As the TCK's PUSH-DELIVER tests do: a tck-input-required task created with a
    webhook in SendMessage's configuration, then a follow-up message; and a config on a
    task that is already completed (PUSH-CREATE-001) is accepted."""
    message = {
        **user_message([{"text": "TCK prerequisite task creation"}]),
        "messageId": "tck-input-required-push-1",
    }
    config = {
        "taskPushNotificationConfig": {
            "id": "tck-push",
            "url": receiver.url + "/tck",
            "authentication": {"scheme": "Bearer", "credentials": "tck-test-token"},
        }
    }
    task = wire.result("SendMessage", {"message": message, "configuration": config})["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    follow = {
        **user_message([{"text": "TCK trigger push notification delivery"}]),
        "taskId": task["id"],
        "messageId": "tck-complete-task-push-1",
    }
    wire.result("SendMessage", {"message": follow})
    got = until(lambda: receiver.requests, what="the TCK-style delivery")
    assert got[0].header("Authorization") == "Bearer tck-test-token"
    assert set(got[0].json()) <= {"task", "message", "statusUpdate", "artifactUpdate"}
    finished = wire.result(
        "SendMessage",
        {"message": {**user_message([{"text": "x"}]), "messageId": "tck-complete-task-2"}},
    )["task"]
    assert finished["status"]["state"] == "TASK_STATE_COMPLETED"
    made = wire.result(
        "CreateTaskPushNotificationConfig",
        {"task_id": finished["id"], "id": "late", "url": "https://example.com/tck-push-webhook"},
    )
    assert made["id"] == "late"
