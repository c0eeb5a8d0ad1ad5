"""The cell-level API against a real mock agent on 127.0.0.1."""

import pytest

from hitl_nb.client import SyncHitlClient, TaskEvent
from hitl_nb.errors import HitlError
from hitl_nb.mock_agent import MockAgent, Scenario, Step
from hitl_nb.notebook import Conversation, PromptCard
from tests.helpers.until import until_async

SNEAKY = Scenario(
    name="sneaky",
    description="A prompt with markup in it.",
    steps=[
        Step(
            prompt="<script>alert(1)</script> Approve?",
            response_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
        )
    ],
)


@pytest.fixture(scope="module")
def agent():
    with MockAgent() as running:
        running.register_scenario(SNEAKY)
        yield running


@pytest.fixture
def client(agent):
    c = SyncHitlClient(agent.url)
    yield c
    c.close()


def test_approval_round_trip(client):
    chat = Conversation.start(client, {"scenario": "approval"})
    card = chat.current
    assert isinstance(card, PromptCard)
    assert "hitl-card" in card.widget._dom_classes
    outcome = chat.answer({"approve": True, "comment": "ship it"})
    assert outcome.status == "accepted"
    assert outcome.task is not None and outcome.task.status.state.name == "COMPLETED"
    assert chat.current is None
    assert "task is COMPLETED" in chat.to_text()
    assert "accepted" in card.status.value
    with pytest.raises(HitlError, match="no prompt is open"):
        chat.answer({"approve": True})


def test_an_invalid_answer_is_not_sent(client):
    chat = Conversation.start(client, {"scenario": "approval"})
    outcome = chat.answer({"comment": "forgot to decide"})
    assert outcome.status == "invalid"
    assert [e["path"] for e in outcome.validation_errors] == ["/approve"]
    assert client.get_task(chat.task.id).status.state.name == "INPUT_REQUIRED"
    assert chat.answer({"approve": False}).status == "accepted"


def test_a_second_answer_to_the_same_prompt_is_a_conflict(agent, client):
    chat = Conversation.start(client, {"scenario": "approval"})
    card = chat.current
    # Someone else answers first (another client), then the person submits.
    other = SyncHitlClient(agent.url)
    other.respond(chat.task.id, card.prompt_id, {"approve": True})
    other.close()
    outcome = card.answer({"approve": False})
    assert outcome.status == "conflict" and "409" in outcome.message
    assert card.form.disabled


def test_multi_step_adds_a_card_per_prompt(client):
    chat = Conversation.start(client, {"scenario": "multi-step"})
    seen = []
    while chat.current is not None:
        card = chat.current
        seen.append(card.prompt_id)
        schema = card.envelope.response_schema
        payload = {
            name: _sample(sub)
            for name, sub in schema["properties"].items()
            if name in schema.get("required", [])
        }
        assert chat.answer(payload).status == "accepted"
    assert len(seen) == 3 == len(set(seen))
    assert len(chat.cards) == 3 and chat.widget.children[:3] == tuple(c.widget for c in chat.cards)
    assert chat.task.status.state.name == "COMPLETED"


def test_consensus_is_held_until_two_agree(client):
    chat = Conversation.start(client, {"scenario": "consensus"})
    assert chat.answer({"approve": True}).status == "refused"  # nobody named
    assert chat.answer({"approve": True}, responder="alice").status == "held"
    assert client.get_task(chat.task.id).status.state.name == "INPUT_REQUIRED"
    assert chat.answer({"approve": True}, responder="bob").status == "accepted"


def test_specific_refuses_others_before_sending(client):
    chat = Conversation.start(client, {"scenario": "specific"}, responder="mallory")
    outcome = chat.answer({"approve": True})
    assert outcome.status == "refused" and "reviewer@example.org" in outcome.message
    assert client.get_task(chat.task.id).status.state.name == "INPUT_REQUIRED"
    assert chat.answer({"approve": True}, responder="reviewer@example.org").status == "accepted"


def test_echo_shows_the_artifact_escaped(client):
    chat = Conversation.start(client, {"scenario": "echo"})
    chat.answer({"message": "<b>hi</b>"})
    assert 'artifact: {"message": "<b>hi</b>"}' in chat.to_text()
    assert (
        "&lt;b&gt;hi&lt;/b&gt;" in chat.artifacts.value and "<b>hi</b>" not in chat.artifacts.value
    )


def test_the_prompt_is_rendered_as_text(client):
    chat = Conversation.start(client, {"scenario": "sneaky"})
    header = chat.current.widget.children[0].value
    assert "<script>" not in header and "&lt;script&gt;" in header
    assert chat.to_text().startswith("? <script>alert(1)</script> Approve?")


def test_clicking_submit_answers_like_code(client):
    chat = Conversation.start(client, {"scenario": "approval"})
    card = chat.current
    card.form.value = {"approve": True}
    card.form.submit_button.click()  # the same handlers a browser click runs
    outcome = card.wait(timeout=30)
    assert outcome is not None and outcome.status == "accepted"
    assert chat.task.status.state.name == "COMPLETED"


def test_a_click_does_not_block_the_kernel_while_the_agent_works():
    with MockAgent(faults=["slow-resume=2000"]) as slow:
        client = SyncHitlClient(slow.url)
        try:
            chat = Conversation.start(client, {"scenario": "approval"})
            card = chat.current
            card.form.value = {"approve": True}
            card.form.submit_button.click()
            assert card.outcome is None  # the handler returned before the agent resumed
            assert "sending" in card.status.value
            outcome = card.wait(timeout=30)
            assert outcome is not None and outcome.status == "accepted"
        finally:
            client.close()


def test_mimebundle_has_a_text_fallback(client):
    chat = Conversation.start(client, {"scenario": "approval"})
    bundle = chat._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"].startswith("? Approve the deployment")


def _sample(schema):
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    return {
        "string": "x",
        "integer": max(1, schema.get("minimum", 1)),
        "number": 1,
        "boolean": True,
    }.get(kind, "x")


class _LastLookTaken:
    """A follower that has seen the task's last state and is ending: it looks no more."""

    running = True

    def wake(self) -> None:
        pass

    def stop(self) -> None:
        self.running = False


def test_an_answer_accepted_after_the_task_was_seen_to_end_settles_its_card(client):
    # The follower can see the task move on while an answer is still on its way (the
    # card is sending then, so it does not settle) and end without another look. The
    # acceptance then settles the card itself; before, the card waited for a look that
    # never came and said "has not continued" (a consensus card under load, 60 s).
    chat = Conversation(client, client.send({"scenario": "approval"}), follow=False)
    chat._box[0] = _LastLookTaken()
    card = chat.current
    assert isinstance(card, PromptCard)
    send = card.sender.send

    async def send_then_see_the_end(*args, **kwargs):
        verdict = await send(*args, **kwargs)

        async def ended():
            task = await card.link.client.get_task(chat.task.id)
            return task if task.status.state.is_terminal else None

        task = await until_async(ended, timeout=30, what="the agent to finish the task")
        chat.receive(TaskEvent(task))  # what the follower's last look delivers
        assert chat.task.status.state.name == "COMPLETED" and card.state == "sending"
        return verdict

    card.sender.send = send_then_see_the_end
    outcome = card.answer({"approve": True}, timeout=30)
    assert outcome.status == "accepted", outcome
    assert outcome.message.endswith("the task is now COMPLETED"), outcome.message
    chat.close()
