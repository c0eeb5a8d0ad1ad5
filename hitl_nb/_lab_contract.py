"""The contract with JupyterLab's page, for Python: one place, read from the schema.

``hitl_nb/schemas/lab.schema.json`` is the contract between what the Python side sends
and what the extension's TypeScript reads: a prompt as a list draws it (``PromptItem``,
the gateway's feed item), the list the page reads (``Listing``), the event the pages
hear on the Jupyter server's event bus (``LabEvent``), the gateway's feed events, and
(under ``x-contract``) the routes and the page URL's parameters. ``src/contract.ts`` is
generated from the same file (``jlpm build:contract``); ``tests/test_lab_contract.py``
checks what the code produces against the schema and that the generated file is current,
so a change on one side alone fails the suite.

The names here are the schema's, read once at import.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = [
    "EVENT_ID",
    "EVENT_SCHEMA",
    "PLACES_ROUTE",
    "PROMPTS_ROUTE",
    "SCHEMA",
    "URL_INBOX",
    "URL_PROMPT",
    "URL_REGISTRATION",
]

#: The whole contract (a JSON Schema whose ``$defs`` are the shapes).
SCHEMA: dict[str, Any] = json.loads(
    resources.files("hitl_nb.schemas").joinpath("lab.schema.json").read_text("utf-8")
)

#: The event the pages hear on jupyter-server's event bus (jupyter_events registers it):
#: a relay's list changed. ``{"feed", "epoch", "seq"}``, never a prompt.
EVENT_SCHEMA: dict[str, Any] = SCHEMA["$defs"]["LabEvent"]
#: Its id, which the page listens for.
EVENT_ID: str = EVENT_SCHEMA["$id"]

_ROUTES: dict[str, str] = SCHEMA["x-contract"]["routes"]
#: ``GET``: the open prompts the page's user may answer (or what changed); with
#: ``/<registration>/<prompt_id>``: one prompt, whole. Relative to the server's base URL.
PROMPTS_ROUTE: str = _ROUTES["prompts"]
#: ``POST``: a kernel says which notebook cell shows a task's cards.
PLACES_ROUTE: str = _ROUTES["places"]

_PARAMETERS: dict[str, str] = SCHEMA["x-contract"]["urlParameters"]
#: The page URL's parameter that opens one prompt's card (its prompt id).
URL_PROMPT: str = _PARAMETERS["prompt"]
#: ... and the gateway's id of its task, beside it (a prompt id is unique at its agent).
URL_REGISTRATION: str = _PARAMETERS["registration"]
#: The page URL's parameter that opens the prompts panel (a digest's link).
URL_INBOX: str = _PARAMETERS["inbox"]
