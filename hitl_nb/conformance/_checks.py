"""The table of everything the harness checks, by id, in the order it runs.

``CF-1`` .. ``CF-7`` are hitl-prompt/v1 §Conformance, step texts as the spec words
them. The ``EXT-*`` ids are MUSTs the spec states elsewhere:

=====================  ==========================================================
``EXT-CARD``           the card declares the extension, ``required: false``,
                       ``params: {}`` (§Activation)
``EXT-UNKNOWN-ID``     an unknown prompt_id gets 409 (§Acceptance and rejection)
``EXT-NO-ACTIVATION``  no envelope for a client that did not activate (§Activation)
``EXT-ECHO``           the URI echoed in ``A2A-Extensions`` (§Activation)
``EXT-STRICT``         every envelope strict-valid (§Prompt Envelope)
``EXT-UNIQUE``         prompt_ids unique across prompts (S-5)
``EXT-SCHEMA-SIZE``    no response_schema over 64 KiB (S-2)
=====================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Iterable

from . import _cf, _latency, _musts
from ._context import CheckSpec
from ._report import GROUP_CONFORMANCE as CONF
from ._report import GROUP_FURTHER as MORE

__all__ = ["CHECKS", "CHECK_IDS", "select"]

_S_CONF = "§Conformance"

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        "CF-1",
        "prompt_id correlation (AC-1)",
        CONF,
        f"{_S_CONF} / Scenario CF-1",
        (
            "Activate the extension.",
            "Drive the agent into INPUT_REQUIRED.",
            "Capture the emitted envelope; assert prompt_id is present and is a valid UUID.",
            "Send a valid response carrying that exact prompt_id.",
            "Assert the agent accepts the response and resumes.",
            "Send a second response carrying the same prompt_id.",
            "Assert the agent rejects with 409 Conflict / hitl_already_answered_or_unknown.",
        ),
        _cf.cf1,
    ),
    CheckSpec(
        "CF-2",
        "schema-valid response accepted (AC-2)",
        CONF,
        f"{_S_CONF} / Scenario CF-2",
        (
            "Drive the agent into INPUT_REQUIRED with a known response_schema.",
            "Send a payload that validates against that schema.",
            "Assert HTTP 200 OK (or JSON-RPC success).",
            "Assert the Task transitions out of INPUT_REQUIRED.",
        ),
        _cf.cf2,
    ),
    CheckSpec(
        "CF-3",
        "schema-invalid response -> 422 (AC-3)",
        CONF,
        f"{_S_CONF} / Scenario CF-3",
        (
            "Drive the agent into INPUT_REQUIRED.",
            "Send a payload that violates the response_schema.",
            "Assert HTTP 422 Unprocessable Entity with validation_errors populated.",
            "Assert the Task remains in INPUT_REQUIRED.",
            "Assert a subsequent valid response with the same prompt_id is still accepted.",
        ),
        _cf.cf3,
    ),
    CheckSpec(
        "CF-4",
        "resume latency <= 1 second (AC-4)",
        CONF,
        f"{_S_CONF} / Scenario CF-4",
        (
            "Drive the agent into INPUT_REQUIRED.",
            "Record t0 immediately before sending a valid response.",
            "Observe the Task status transition out of INPUT_REQUIRED at time t1.",
            "Assert t1 - t0 <= 1000 ms (95th percentile across the trials).",
        ),
        _latency.cf4,
    ),
    CheckSpec(
        "CF-5",
        "transport-only, no UI assumptions (AC-5)",
        CONF,
        f"{_S_CONF} / Scenario CF-5",
        (
            "Inspect the prompt envelope schema (and the envelopes emitted).",
            "Assert no field references a UI, delivery channel, or human identity directory.",
            'Assert no "MUST present to a user" / "MUST display" obligation on the agent.',
        ),
        _cf.cf5,
    ),
    CheckSpec(
        "CF-6",
        "outbox replay survives disconnect (AC-6)",
        CONF,
        f"{_S_CONF} / Scenario CF-6",
        (
            "Drive the agent into INPUT_REQUIRED.",
            "Disconnect the client transport (cut a live stream).",
            "Reconnect and request a replay of buffered events.",
            "Assert the envelope is replayed with identical prompt_id and response_schema.",
            "Send a valid response and assert acceptance.",
        ),
        _cf.cf6,
    ),
    CheckSpec(
        "CF-7",
        "end-to-end harness round-trip (AC-7)",
        CONF,
        f"{_S_CONF} / Scenario CF-7",
        (
            "Run the harness against the agent, configured with this extension URI.",
            "Assert the harness reports a green run for all of CF-1..CF-6.",
        ),
        _cf.cf7,
        requires=("CF-1", "CF-2", "CF-3", "CF-4", "CF-5", "CF-6"),
    ),
    CheckSpec(
        "EXT-CARD",
        "card declares the extension, required false, params {}",
        MORE,
        "§Activation / AgentCard declaration",
        (
            "The card lists the URI in capabilities.extensions[].",
            'The entry says "required": false.',
            'The entry says "params": {}.',
        ),
        _musts.card_declaration,
    ),
    CheckSpec(
        "EXT-UNKNOWN-ID",
        "unknown prompt_id rejected with 409",
        MORE,
        "§Response Envelope / Acceptance and rejection",
        (
            "Drive the agent into INPUT_REQUIRED.",
            "Send a valid payload under a prompt_id the agent never issued.",
            "Assert the agent rejects with 409 Conflict / hitl_already_answered_or_unknown.",
            "Assert the task still waits on its own prompt.",
        ),
        _musts.unknown_id,
    ),
    CheckSpec(
        "EXT-NO-ACTIVATION",
        "no envelope without activation",
        MORE,
        "§Activation",
        (
            "Drive a task with a client that does not activate the extension.",
            "Assert no message, event or task carries the envelope.",
        ),
        _musts.no_activation,
    ),
    CheckSpec(
        "EXT-ECHO",
        "activation header echoed",
        MORE,
        "§Activation / HTTP header echo",
        (
            "Collect every answer to a request that activated the extension.",
            "Assert each names the URI in its A2A-Extensions header (metadata on gRPC).",
        ),
        _musts.echo,
    ),
    CheckSpec(
        "EXT-STRICT",
        "every envelope strict-valid",
        MORE,
        "§Prompt Envelope / Field requirements",
        (
            "Collect every envelope the agent emitted.",
            "Assert each passes the strict check (members, UUID, schema, deadline, responders).",
        ),
        _musts.strict,
    ),
    CheckSpec(
        "EXT-UNIQUE",
        "prompt_ids unique across prompts (S-5)",
        MORE,
        "§Security Considerations S-5",
        (
            "Collect the prompt_ids of at least two prompts.",
            "Assert no prompt_id serves two prompts.",
        ),
        _musts.unique_ids,
    ),
    CheckSpec(
        "EXT-SCHEMA-SIZE",
        "response_schema <= 64 KiB (S-2)",
        MORE,
        "§Security Considerations S-2",
        (
            "Measure every response_schema emitted (compact UTF-8 JSON).",
            "Assert none exceeds 64 KiB.",
        ),
        _musts.schema_size,
    ),
)

#: Every id, in the order the checks run.
CHECK_IDS: tuple[str, ...] = tuple(c.id for c in CHECKS)


def select(only: Iterable[str] | None = None) -> list[CheckSpec]:
    """The checks to run for ``only`` (ids, case-insensitive; None: all), in table order,
    plus what they require. Raises ``ValueError`` naming an unknown id."""
    if only is None:
        return list(CHECKS)
    wanted = {str(i).strip().upper() for i in only if str(i).strip()}
    unknown = sorted(wanted - set(CHECK_IDS))
    if unknown:
        raise ValueError(f"unknown check id(s) {', '.join(unknown)}; known: {', '.join(CHECK_IDS)}")
    if not wanted:
        raise ValueError("no check selected")
    for spec in CHECKS:
        if spec.id in wanted:
            wanted.update(spec.requires)
    return [c for c in CHECKS if c.id in wanted]
