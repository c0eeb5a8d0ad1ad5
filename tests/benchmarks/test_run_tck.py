"""benchmarks/run_tck.py: how it reads the TCK's JUnit report and how it starts the runs
(the TCK itself is not run here: it is not vendored)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "run_tck.py"


@pytest.fixture(scope="module")
def run_tck() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_tck", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def case(classname: str, name: str, inner: str = "") -> str:
    return f'<testcase classname="tests.compatibility.{classname}" name="{name}">{inner}</testcase>'


def skipped(message: str) -> str:
    return f'<skipped type="pytest.skip" message="{message}" />'


def junit(tmp_path: Path, *cases: str) -> Path:
    path = tmp_path / "junit.xml"
    body = "".join(cases)
    path.write_text(f'<testsuites><testsuite name="pytest">{body}</testsuite></testsuites>')
    return path


def test_a_test_for_agents_without_push_does_not_count_against_one_with_push(
    run_tck: ModuleType, tmp_path: Path
) -> None:
    report = junit(
        tmp_path,
        case(
            "core_operations.test_error_handling.TestCapabilityPushNotifications",
            "test_push_not_supported_jsonrpc",
            skipped("Agent supports push notifications"),
        ),
        case(
            "jsonrpc.test_error_codes.TestJsonRpcErrorCodeMappings",
            "test_push_notification_not_supported_error",
            skipped("Agent supports push notifications; cannot trigger -32003"),
        ),
        case(
            "core_operations.test_push_notifications.TestPushNotificationCrud",
            "test_create_push_config[jsonrpc]",
        ),
        case(
            "core_operations.test_push_notifications.TestPushNotificationCrud",
            "test_create_push_config[grpc]",
            skipped("Transport 'grpc' not configured"),
        ),
        case(
            "core_operations.test_push_notifications.TestPushNotificationDelivery",
            "test_delivery_includes_auth[jsonrpc]",
            skipped("send_message failed: task not found"),
        ),
        case(
            "core_operations.test_push_notifications.TestPushNotificationDelivery",
            "test_delivery_payload_format[jsonrpc]",
            '<failure message="not a StreamResponse" />',
        ),
    )
    result = run_tck.tally(report)
    assert (result["passed"], result["failed"], result["prerequisite"]) == (1, 1, 1)
    assert result["not_applicable"] == 3 and result["applicable"] == 3
    assert result["unmet"] == [
        "tests.compatibility.core_operations.test_push_notifications."
        "TestPushNotificationDelivery::test_delivery_includes_auth[jsonrpc]: "
        "send_message failed: task not found"
    ]
    push = result["categories"]["core_operations/push_notifications"]
    assert push == {"passed": 1, "failed": 1, "prerequisite": 1, "not_applicable": 1, "xfailed": 0}
    assert result["categories"]["jsonrpc/error_codes"]["not_applicable"] == 1
    assert list(result["categories"]) == sorted(result["categories"])


def test_the_push_off_run_starts_an_agent_without_push_and_runs_the_push_tests(
    run_tck: ModuleType, tmp_path: Path
) -> None:
    assert "--no-push" not in run_tck.MockAgentProcess().command
    assert run_tck.MockAgentProcess(push=False).command[-1] == "--no-push"
    everything = run_tck.tck_command("http://a", "jsonrpc", "must", tmp_path / "j.xml", None)
    push_only = run_tck.tck_command("http://a", "jsonrpc", "all", tmp_path / "j.xml", "push")
    assert everything[-2:] == ["-m", "must"] and "-k" not in everything
    assert push_only[-2:] == ["-k", "push"] and "must" not in push_only
    assert "--sut-host=http://a" in push_only and "--transport=jsonrpc" in push_only


def test_the_sdk_agents_are_one_program_with_and_without_the_extension(
    run_tck: ModuleType,
) -> None:
    bare = run_tck.agent_process("sdk", push=True).command
    hitl = run_tck.agent_process("sdk-hitl", push=False).command
    assert bare[1].endswith("_sdk_tck_agent.py") and bare[1:] == [bare[1]]
    assert hitl[1:] == [bare[1], "--hitl", "--no-push"]
    assert run_tck.agent_process("mock", push=True).command == run_tck.MockAgentProcess().command


def test_each_bridge_is_compared_with_its_peer_on_what_fails_or_is_not_set_up(
    run_tck: ModuleType,
) -> None:
    def result(failures: list[str], unmet: list[str]) -> dict[str, object]:
        return {"failures": failures, "unmet": [f"{name}: why" for name in unmet]}

    figures = {
        "adk: jsonrpc": result(["a", "b"], ["c"]),
        "adk-bare: jsonrpc": result(["a"], ["b", "d"]),
        "adk: http_json": result(["a"], []),
        "adk-bare: http_json": {"not_served": True},
    }
    compared = run_tck.compare(figures, ["adk", "adk-bare"])
    assert compared == {
        "adk: jsonrpc against adk-bare": {"only the bridge": ["c"], "only the peer": ["d"]}
    }
    assert run_tck.compare(figures, ["adk"]) == {}
    assert run_tck.PEERS["openai"] == run_tck.PEERS["langgraph"] == "sdk-bare"
    assert run_tck.PEERS["maf"] == "sdk-bare"


def test_the_framework_agents_are_one_program_run_once_as_they_are(
    run_tck: ModuleType,
) -> None:
    for name in run_tck.FRAMEWORK_AGENTS:
        command = run_tck.agent_process(name, push=False).command
        assert command[1].endswith("_bridge_tck_agents.py") and command[2:] == [name]
        on_grpc = run_tck.agent_process(name, push=True, grpc=True).command
        assert on_grpc == [*command, "--grpc"]


def test_both_sides_see_the_tck_prefixes_a_model_can_act_on_in_the_text(
    run_tck: ModuleType,
) -> None:
    path = SCRIPT.parent / "_bridge_tck_agents.py"
    spec = importlib.util.spec_from_file_location("bridge_tck_agents", path)
    assert spec is not None and spec.loader is not None
    agents = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agents)

    def sent(message_id: str, *, rpc: bool = True) -> dict[str, object]:
        message: dict[str, object] = {
            "messageId": message_id,
            "parts": [{"data": {}}, {"text": "hi"}],
        }
        body: dict[str, object] = {
            "jsonrpc": "2.0",
            "method": "SendMessage",
            "params": {"message": message},
        }
        return body if rpc else {"message": message}

    def text(body: bytes, *, rpc: bool = True) -> str:
        loaded = json.loads(body)
        message = loaded["params"]["message"] if rpc else loaded["message"]
        return str(message["parts"][1]["text"])

    marked = agents._marked(json.dumps(sent("tck-input-required-7")).encode())
    assert text(marked) == "[tck-input-required] hi"
    assert agents.decide(text(marked)) == "approve"
    rest = json.dumps(sent("test-resubscribe-message-id-1", rpc=False)).encode()
    assert agents.decide(text(agents._marked(rest), rpc=False)) == "slow"
    for untouched in (json.dumps(sent("tck-complete-task-1")).encode(), b"{'not': json}"):
        assert agents._marked(untouched) == untouched
    assert agents.decide("hi") == "answer"
    assert set(agents.AGENTS) == set(run_tck.FRAMEWORK_AGENTS)
