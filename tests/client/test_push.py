"""HitlClient's push-notification configuration methods, on every binding and version
the mock agent speaks, and their synchronous twins."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator

import pytest

from hitl_nb.a2a import PushConfig, TaskState
from hitl_nb.client import HitlClient, PromptEvent, SyncHitlClient, prompt_of
from hitl_nb.errors import PushNotificationNotSupported, TaskNotFound
from hitl_nb.mock_agent import MockAgent
from tests.helpers.tiny_server import Conn, Request, TinyServer
from tests.helpers.until import until

DIALECTS = [("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0")]
PUSH_METHODS = [
    "create_push_config",
    "get_push_config",
    "list_push_configs",
    "delete_push_config",
    "read_notification",
]


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent(push_backoff=0.05) as a:
        yield a


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: f"{d[0]}-{d[1]}")
def test_config_round_trip(agent: MockAgent, dialect: tuple[str, str]) -> None:
    binding, version = dialect

    async def run() -> None:
        async with HitlClient(agent.url, binding=binding, version=version) as client:  # type: ignore[arg-type]
            task = await client.send("approval")
            assert not isinstance(task, type(None))
            tid = task.id  # type: ignore[union-attr]
            made = await client.create_push_config(
                tid,
                "http://127.0.0.1:9/hook",
                token="tok",
                auth_scheme="Bearer",
                auth_credentials="cred",
            )
            assert isinstance(made, PushConfig) and made.id and made.task_id == tid
            assert (made.url, made.token) == ("http://127.0.0.1:9/hook", "tok")
            assert made.authorization() == "Bearer cred"
            again = await client.get_push_config(tid, made.id)
            assert again == made
            other = await client.create_push_config(tid, "http://127.0.0.1:9/b", config_id="b")
            listed = await client.list_push_configs(tid)
            assert [c.id for c in listed] == [made.id, "b"]
            assert listed[1] == other
            await client.delete_push_config(tid, made.id)  # type: ignore[arg-type]
            await client.delete_push_config(tid, made.id)  # type: ignore[arg-type]  # idempotent
            assert [c.id for c in await client.list_push_configs(tid)] == ["b"]
            with pytest.raises(TaskNotFound):
                await client.get_push_config(tid, made.id)
            with pytest.raises(TaskNotFound):
                await client.create_push_config("no-such-task", "http://127.0.0.1:9/x")

    asyncio.run(run())


def test_list_follows_pages(agent: MockAgent, monkeypatch: pytest.MonkeyPatch) -> None:
    import hitl_nb.mock_agent._rest as rest

    original = rest.page_of_push_configs

    def pages_of_three(configs, page_size, page_token):  # type: ignore[no-untyped-def]
        return original(configs, page_size or 3, page_token)

    # Pages of 50 by default and at most 10 configurations: shrink the pages to prove
    # that the client follows nextPageToken.
    monkeypatch.setattr(rest, "page_of_push_configs", pages_of_three)

    async def run() -> None:
        async with HitlClient(agent.url, binding="HTTP+JSON") as client:
            tid = (await client.send("approval")).id  # type: ignore[union-attr]
            for i in range(10):  # the agent's cap
                await client.create_push_config(tid, f"http://127.0.0.1:9/{i}", config_id=f"c{i}")
            listed = await client.list_push_configs(tid)
            assert [c.id for c in listed] == [f"c{i}" for i in range(10)]

    asyncio.run(run())


def test_push_off_raises_not_supported() -> None:
    with MockAgent(push_notifications=False) as agent:

        async def run() -> None:
            async with HitlClient(agent.url) as client:
                assert client.card is not None
                assert client.card.capabilities.push_notifications is False
                tid = (await client.send("approval")).id  # type: ignore[union-attr]
                with pytest.raises(PushNotificationNotSupported):
                    await client.create_push_config(tid, "http://127.0.0.1:9/x")
                with pytest.raises(PushNotificationNotSupported):
                    await client.list_push_configs(tid)

        asyncio.run(run())


def test_sync_client_configures_and_the_agent_delivers(agent: MockAgent) -> None:
    """The whole loop from a notebook's point of view: configure, answer, get pushed."""
    got: list[Request] = []

    def record(request: Request, conn: Conn) -> None:
        got.append(request)
        conn.answer({}, 200)

    receiver = TinyServer(record).start()
    try:
        with SyncHitlClient(agent.url) as client:
            task = client.send("approval")
            prompt = prompt_of(task)
            assert isinstance(prompt, PromptEvent)
            config = client.create_push_config(prompt.task_id, receiver.url + "/n", token="s")
            assert client.get_push_config(prompt.task_id, config.id) == config
            assert client.list_push_configs(prompt.task_id) == [config]
            client.respond(prompt.task_id, prompt.prompt_id, {"approve": True})
            until(
                lambda: any(
                    r.json().get("statusUpdate", {}).get("status", {}).get("state")
                    == "TASK_STATE_COMPLETED"
                    for r in got
                ),
                what="the completed notification",
            )
            assert {r.header("X-A2A-Notification-Token") for r in got} == {"s"}
            client.delete_push_config(prompt.task_id, config.id)  # type: ignore[arg-type]
            assert client.list_push_configs(prompt.task_id) == []
            assert client.get_task(prompt.task_id).status.state is TaskState.COMPLETED
    finally:
        receiver.stop()


@pytest.mark.parametrize("name", PUSH_METHODS)
def test_sync_and_async_push_methods_take_the_same_arguments(name: str) -> None:
    own = inspect.signature(getattr(HitlClient, name))
    sync = inspect.signature(getattr(SyncHitlClient, name))
    assert list(own.parameters) == list(sync.parameters)
    for pname, param in own.parameters.items():
        assert sync.parameters[pname].kind is param.kind, pname
        assert sync.parameters[pname].default == param.default, pname
    assert inspect.iscoroutinefunction(getattr(HitlClient, name))
    assert not inspect.iscoroutinefunction(getattr(SyncHitlClient, name))
