"""Push-notification configurations (hitl_nb.mock_agent._push_configs): create, get,
list and delete on both bindings and both versions, push turned off, configurations kept
across a restart, the protobuf field names the TCK sends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.mock_agent_client import Wire, headers, user_message


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as a:
        yield a


@pytest.fixture()
def wire(agent: MockAgent) -> Iterator[Wire]:
    w = Wire(agent.url)
    yield w
    w.close()


def test_card_advertises_push(wire: Wire, agent: MockAgent) -> None:
    assert wire.http.get(agent.card_url).json()["capabilities"]["pushNotifications"] is True


def test_jsonrpc_v1_config_methods(wire: Wire) -> None:
    task = wire.start("approval")
    tid = task["id"]
    made = wire.result(
        "CreateTaskPushNotificationConfig",
        {
            "taskId": tid,
            "url": "http://127.0.0.1:9/hook",
            "token": "s3cret",
            "authentication": {"scheme": "Bearer", "credentials": "abc"},
        },
    )
    assert made["taskId"] == tid and made["url"] == "http://127.0.0.1:9/hook"
    assert made["token"] == "s3cret" and made["authentication"] == {
        "scheme": "Bearer",
        "credentials": "abc",
    }
    cid = made["id"]
    assert cid  # the agent gave it an id
    got = wire.result("GetTaskPushNotificationConfig", {"taskId": tid, "id": cid})
    assert got == made
    second = wire.result(
        "CreateTaskPushNotificationConfig",
        {"taskId": tid, "id": "mine", "url": "https://127.0.0.1:9/other"},
    )
    assert second["id"] == "mine"
    listed = wire.result("ListTaskPushNotificationConfigs", {"taskId": tid})
    assert [c["id"] for c in listed["configs"]] == [cid, "mine"]
    assert listed["nextPageToken"] == ""
    page = wire.result("ListTaskPushNotificationConfigs", {"taskId": tid, "pageSize": 1})
    assert [c["id"] for c in page["configs"]] == [cid] and page["nextPageToken"] == "1"
    rest = wire.result(
        "ListTaskPushNotificationConfigs",
        {"taskId": tid, "pageSize": 1, "pageToken": page["nextPageToken"]},
    )
    assert [c["id"] for c in rest["configs"]] == ["mine"]
    assert wire.result("DeleteTaskPushNotificationConfig", {"taskId": tid, "id": cid}) == {}
    # §3.1.10: idempotent.
    assert wire.result("DeleteTaskPushNotificationConfig", {"taskId": tid, "id": cid}) == {}
    _, body = wire.rpc("GetTaskPushNotificationConfig", {"taskId": tid, "id": cid})
    assert body["error"]["code"] == -32001
    listed = wire.result("ListTaskPushNotificationConfigs", {"taskId": tid})
    assert [c["id"] for c in listed["configs"]] == ["mine"]


def test_jsonrpc_v03_config_methods(wire: Wire) -> None:
    tid = wire.start("approval")["id"]
    made = wire.result(
        "tasks/pushNotificationConfig/set",
        {
            "taskId": tid,
            "pushNotificationConfig": {
                "url": "http://127.0.0.1:9/hook",
                "token": "t",
                "authentication": {"schemes": ["Bearer"], "credentials": "c"},
            },
        },
        version=None,
    )
    inner = made["pushNotificationConfig"]
    assert made["taskId"] == tid and inner["url"] == "http://127.0.0.1:9/hook"
    assert inner["authentication"] == {"schemes": ["Bearer"], "credentials": "c"}
    cid = inner["id"]
    got = wire.result(
        "tasks/pushNotificationConfig/get",
        {"id": tid, "pushNotificationConfigId": cid},
        version=None,
    )
    assert got == made
    # 0.3 get without a config id: the task's (first) configuration.
    assert wire.result("tasks/pushNotificationConfig/get", {"id": tid}, version=None) == made
    listed = wire.result("tasks/pushNotificationConfig/list", {"id": tid}, version=None)
    assert listed == [made]
    gone = wire.result(
        "tasks/pushNotificationConfig/delete",
        {"id": tid, "pushNotificationConfigId": cid},
        version=None,
    )
    assert gone is None
    assert wire.result("tasks/pushNotificationConfig/list", {"id": tid}, version=None) == []
    # The same configuration seen through 1.0: one store, two spellings.
    wire.result(
        "tasks/pushNotificationConfig/set",
        {"taskId": tid, "pushNotificationConfig": {"id": "x", "url": "http://127.0.0.1:9/h"}},
        version=None,
    )
    v1 = wire.result("GetTaskPushNotificationConfig", {"taskId": tid, "id": "x"})
    assert v1 == {"id": "x", "taskId": tid, "url": "http://127.0.0.1:9/h"}


def test_rest_config_methods(wire: Wire, agent: MockAgent) -> None:
    tid = wire.start("approval")["id"]
    h = headers()
    base = f"{agent.url}/tasks/{tid}/pushNotificationConfigs"
    r = wire.http.post(base, json={"url": "http://127.0.0.1:9/hook", "token": "t"}, headers=h)
    assert r.status_code == 200, r.text
    made = r.json()
    assert made["taskId"] == tid and made["token"] == "t"
    got = wire.http.get(f"{base}/{made['id']}", headers=h)
    assert got.status_code == 200 and got.json() == made
    listed = wire.http.get(base, headers=h).json()
    assert listed == {"configs": [made], "nextPageToken": ""}
    r = wire.http.delete(f"{base}/{made['id']}", headers=h)
    assert r.status_code == 200 and r.json() == {}
    assert wire.http.delete(f"{base}/{made['id']}", headers=h).status_code == 200
    missing = wire.http.get(f"{base}/{made['id']}", headers=h)
    assert missing.status_code == 404
    assert missing.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"


NOT_SUPPORTED = "push notifications are not supported by this agent"


def test_push_off_answers_not_supported() -> None:
    with MockAgent(push_notifications=False) as agent:
        w = Wire(agent.url)
        try:
            card = w.http.get(agent.card_url).json()
            assert card["capabilities"]["pushNotifications"] is False
            tid = w.start("approval")["id"]
            for method, params, version in (
                ("CreateTaskPushNotificationConfig", {"taskId": tid, "url": "http://x/"}, "1.0"),
                ("ListTaskPushNotificationConfigs", {"taskId": tid}, "1.0"),
                ("tasks/pushNotificationConfig/set", {}, None),
                ("tasks/pushNotificationConfig/delete", {}, None),
            ):
                _, body = w.rpc(method, params, version=version)
                assert body["error"]["code"] == -32003, (method, body)
                # in the A2A spec's words for the error (§3.3.2), which clients match on
                assert body["error"]["message"] == NOT_SUPPORTED, (method, body)
            r = w.http.get(f"{agent.url}/tasks/{tid}/pushNotificationConfigs", headers=headers())
            assert r.status_code == 400
            assert r.json()["error"]["details"][0]["reason"] == "PUSH_NOTIFICATION_NOT_SUPPORTED"
            assert r.json()["error"]["message"] == NOT_SUPPORTED
            msg = user_message([{"text": "approval"}])
            config = {"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/"}}
            _, body = w.rpc("SendMessage", {"message": msg, "configuration": config})
            assert body["error"]["code"] == -32003
            assert agent.core is not None and len(agent.core.book.tasks) == 1  # no second task
        finally:
            w.close()


def test_configs_survive_a_restart(tmp_path: Path) -> None:
    store = tmp_path / "agent.sqlite"
    with MockAgent(store=store) as agent:
        w = Wire(agent.url)
        tid = w.start("approval")["id"]
        w.result(
            "CreateTaskPushNotificationConfig",
            {"taskId": tid, "id": "keep", "url": "http://127.0.0.1:9/h", "token": "t"},
        )
        w.close()
    with MockAgent(store=store) as agent:
        w = Wire(agent.url)
        got = w.result("GetTaskPushNotificationConfig", {"taskId": tid, "id": "keep"})
        w.close()
    assert got == {"id": "keep", "taskId": tid, "url": "http://127.0.0.1:9/h", "token": "t"}


# -- what the A2A TCK sends (its push tests, run here without the TCK) -------------------


def test_snake_case_params_as_protobuf_clients_send_them(wire: Wire) -> None:
    """The TCK's JSON-RPC client sends proto field names (task_id, page_size)."""
    tid = wire.start("approval")["id"]
    made = wire.result(
        "CreateTaskPushNotificationConfig",
        {"task_id": tid, "id": "snake", "url": "http://127.0.0.1:9/s"},
    )
    assert made["taskId"] == tid
    got = wire.result("GetTaskPushNotificationConfig", {"task_id": tid, "id": "snake"})
    assert got == made
    page = wire.result("ListTaskPushNotificationConfigs", {"task_id": tid, "page_size": 1})
    assert page == {"configs": [made], "nextPageToken": ""}
    assert wire.result("DeleteTaskPushNotificationConfig", {"task_id": tid, "id": "snake"}) == {}
    _, body = wire.rpc("GetTaskPushNotificationConfig", {"taskId": tid, "task_id": tid, "id": "x"})
    assert body["error"]["code"] == -32602 and "not both" in body["error"]["message"]
