"""The shared round-trip corpus, held to the Python forms (the browser's renderer is held
to the same file by ``src/__tests__/form-corpus.spec.ts``).

``tests/forms/corpus/round_trip.json``: ``[{"name", "source", "schema", "values"}]``, the
schema/value pairs of the round-trip tests (``test_fidelity.py`` and others) and the
minimal reproducers found on others' schemas. Each value set on a form comes back
unchanged, types included (``1.0`` stays ``1.0``), valid or not: a form never completes
or repairs what it was given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.forms import Form
from tests.forms.test_fidelity import same

CORPUS = Path(__file__).parent / "corpus" / "round_trip.json"
CASES = json.loads(CORPUS.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        pytest.param(case["schema"], value, id=f"{case['name']}-{i}")
        for case in CASES
        for i, value in enumerate(case["values"])
    ],
)
def test_the_python_form_gives_back_what_it_was_given(schema: Any, value: Any) -> None:
    form = Form(schema)
    form.value = value
    assert same(form.value, value), form.value


def test_the_corpus_is_well_formed() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))
    assert all(case["values"] for case in CASES)
