"""Links to the answer page, and one link per choice of a one-choice prompt (each to a
confirm page, named by the choice's index: the value is read from the stored schema)."""

from __future__ import annotations

import pytest

from hitl_nb._choices import one_choice
from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import AnswerLinks, Batch, PromptFacts, TeamChannels, opened_notes
from hitl_nb.notify._messages import compose
from tests.notify.test_text import HOSTILE, assert_dead

NOW = 1_767_225_600.0
PAGE = "https://hub.example.org/services/hitl/answer/"
LINKS = AnswerLinks("https://hub.example.org/", hub=True, page=PAGE)
TEAMS = TeamChannels({"*": None})  # type: ignore[dict-item]  # targets are not read here
APPROVAL = {
    "type": "object",
    "additionalProperties": False,
    "required": ["approve"],
    "properties": {
        "approve": {"type": "boolean", "title": "Approve"},
        "comment": {"type": "string"},
    },
}


def _message(choices: tuple[str, ...], links: AnswerLinks = LINKS):
    facts = PromptFacts(
        "r1", "p1", "https://agent.example.org/", "Deploy?", specific=("bob",), choices=choices
    )
    (note,) = [n for n in opened_notes(facts, TEAMS, NOW) if n.kind == "opened"]
    return compose(Batch(note.recipient, "t", (note,), 1), links, NOW)


def test_links_go_to_the_answer_page_when_the_host_serves_one() -> None:
    assert LINKS.prompt("r1", "p/1") == PAGE + "prompt/r1/p%2F1"
    assert LINKS.inbox() == PAGE
    assert LINKS.choice("r1", "p1", 1) == PAGE + "confirm/r1/p1?choice=1"
    lab = AnswerLinks("https://hub.example.org/", hub=True)
    assert lab.choice("r1", "p1", 0) is None  # JupyterLab has no confirm page


@pytest.mark.parametrize(
    "page", ["ftp://x/answer/", "/services/hitl/answer/", "https://h/answer/?token=x"]
)
def test_an_answer_page_address_that_is_not_plain_is_refused(page: str) -> None:
    with pytest.raises(NotifyRefused, match="answer page's address"):
        AnswerLinks("https://hub.example.org/", hub=True, page=page)


def test_a_one_choice_prompt_gets_a_link_per_choice_in_plain_text_and_html() -> None:
    labels = tuple(c.label for c in one_choice(APPROVAL))
    assert labels == ("Approve: Yes", "Approve: No")
    m = _message(labels)
    plain = m.plain()
    assert f"Answer it here: {PAGE}prompt/r1/p1" in plain
    assert f"- Approve: Yes: {PAGE}confirm/r1/p1?choice=0" in plain
    assert f"- Approve: No: {PAGE}confirm/r1/p1?choice=1" in plain
    page = m.html()
    assert f'<a href="{PAGE}confirm/r1/p1?choice=0">answer this</a>' in page
    assert m.link == f"{PAGE}prompt/r1/p1"


def test_no_choice_links_where_links_open_jupyterlab_or_more_is_asked() -> None:
    lab = AnswerLinks("https://hub.example.org/", hub=True)
    assert "choice=" not in _message(("Approve: Yes", "Approve: No"), lab).plain()
    assert "choice=" not in _message(()).plain()


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_choice_words_are_the_agents_and_neutralised(hostile: str) -> None:
    m = _message((hostile, "No"))
    line = next(x for x in m.chat().split("\n") if x.endswith("?choice=0"))
    assert_dead(line[2 : line.rindex(": https://")])  # the words, without our link
    assert "<script" not in m.html().lower()


@pytest.mark.parametrize(
    ("schema", "labels"),
    [
        pytest.param(APPROVAL, ["Approve: Yes", "Approve: No"], id="approval"),
        pytest.param(
            {"type": "object", "required": ["s"], "properties": {"s": {"enum": ["low", "high"]}}},
            ["s: low", "s: high"],
            id="enum",
        ),
        pytest.param(
            {
                "type": "object",
                "required": ["go"],
                "properties": {"go": {"oneOf": [{"const": 1, "title": "Ship it"}, {"const": 0}]}},
            },
            ["go: Ship it", "go: 0"],
            id="titled-consts",
        ),
        pytest.param(
            {"type": "object", "required": ["a", "b"], "properties": {"a": {}, "b": {}}},
            [],
            id="two-required",
        ),
        pytest.param(
            {"type": "object", "required": ["t"], "properties": {"t": {"type": "string"}}},
            [],
            id="free-text",
        ),
        pytest.param(
            {
                "type": "object",
                "required": ["n"],
                "properties": {"n": {"enum": list(range(11))}},
            },
            [],
            id="too-many",
        ),
        pytest.param(
            {
                "type": "object",
                "required": ["ok"],
                "minProperties": 2,
                "properties": {"ok": {"type": "boolean"}, "why": {"type": "string"}},
            },
            [],
            id="schema-refuses-the-choice",
        ),
        pytest.param({"type": "array"}, [], id="not-an-object"),
        pytest.param("nonsense", [], id="not-a-schema"),
    ],
)
def test_which_prompts_are_one_choice(schema: object, labels: list[str]) -> None:
    assert [c.label for c in one_choice(schema)] == labels
