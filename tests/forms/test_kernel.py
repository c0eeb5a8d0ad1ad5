"""Forms in a real kernel: displayed as a widget with a text fallback, filled and
submitted through the widget protocol's comm messages, as a front end would."""

from __future__ import annotations

import json

import pytest

from tests.helpers.kernel import kernel, run_queued

pytestmark = pytest.mark.kernel

SETUP = """
import json
from hitl_nb.forms import Form
form = Form({"type": "object", "title": "Approve", "required": ["approved"],
             "properties": {"approved": {"type": "boolean"}, "note": {"type": "string"}}})
print(json.dumps({"approved": form.field("/approved").input.model_id,
                  "note": form.field("/note").input.model_id,
                  "submit": form.submit_button.model_id}))
"""


def _comm(kc, comm_id: str, data: dict) -> None:
    msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    kc.shell_channel.send(msg)


@pytest.mark.slow
def test_form_in_a_kernel_displays_fills_and_submits_over_comms():
    with kernel() as kc:
        setup, shown = run_queued(kc, [SETUP, "form"], timeout=60)
        assert setup.status == "ok", setup.error
        ids = json.loads(setup.stdout)
        bundle = shown.outputs[0]
        assert "application/vnd.jupyter.widget-view+json" in bundle
        assert bundle["text/plain"].startswith("Form: Approve")
        # what a browser sends when the person picks "Yes", types, and clicks Submit
        _comm(kc, ids["approved"], {"method": "update", "state": {"index": 0}, "buffer_paths": []})
        _comm(
            kc, ids["note"], {"method": "update", "state": {"value": "ship it"}, "buffer_paths": []}
        )
        _comm(kc, ids["submit"], {"method": "custom", "content": {"event": "click"}})
        (result,) = run_queued(
            kc, ["print(json.dumps(form.submitted.result(timeout=10)))"], timeout=60
        )
        assert result.status == "ok", result.error
        assert json.loads(result.stdout) == {"approved": True, "note": "ship it"}
