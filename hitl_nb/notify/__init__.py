"""Telling people who are not in Jupyter that a prompt waits for them: email and webhooks.

The gateway knows who may answer each prompt and by when; this package tells them, by
email (SMTP) or a chat or JSON webhook, through an outbox:

- **Who is told what** (:func:`opened_notes`, :func:`outcome_notes`): the people a
  prompt names get a message when it opens and a reminder before its deadline; a prompt
  for anyone goes to the team channel of its agent's host (:class:`TeamChannels`); the
  task's registrant learns the outcome. Each is a :class:`Note`, written to the store in
  the same transaction as what it tells of.
- **The sender** (:class:`Sender`) claims a recipient's due notes from the
  :class:`Outbox` (a store implements it), finds where they go (:class:`Router`: a
  person's own :class:`Preference`, else their address from the :class:`AddressBook`:
  a table, the hub's auth state through :class:`HubDirectory`, or a template), makes
  one :class:`Message` of them (one note, or a digest), and sends it by
  its channel (:class:`Channels`: :class:`EmailChannel` with :class:`SmtpSettings`,
  :class:`WebhookChannel` for Slack-compatible webhooks, signed JSON webhooks
  and Teams workflows), retrying with backoff and giving up after a bound, with an
  audit entry.
- **Kinds of channel** (:class:`Registry`, :func:`default_registry`): each kind is one
  module (its target, how it is given in the settings or by a person, how a message
  looks there) and one registration; nothing else tests a target's type.
- **Limits** (:class:`Limits`): one message per recipient per minute (what comes within
  it is one digest), a ceiling per process, a bound on retries.
- **Safety**: the agent's words are neutralised for each channel (no header injection,
  no mention, no link but ours); every message's one link (:class:`AnswerLinks`) opens
  the place to answer and holds no token; secrets (:class:`Secret`) are read from the
  environment or a file and shown nowhere; webhooks go only where the administrator
  said, and never follow a redirect.

docs/notify.md describes it for administrators and receivers (the signature check).

What the gateway needs inside its transactions (the notes, who is told what) is
imported with the package; the sending side (channels, SMTP, the sender, routing) is
loaded on first use (PEP 562), so a gateway without notifications does not pay for it.
"""

from __future__ import annotations

import typing

from hitl_nb import _lazy
from hitl_nb.notify._audience import (
    TeamChannels,
    escalation_notes,
    opened_notes,
    outcome_notes,
)
from hitl_nb.notify._kind import Target
from hitl_nb.notify._links import AnswerLinks
from hitl_nb.notify._notes import (
    Batch,
    Note,
    PromptFacts,
    person,
    team,
)
from hitl_nb.notify._outbox import Outbox
from hitl_nb.notify._plan import Limits, stale_reason
from hitl_nb.notify._secrets import Secret
from hitl_nb.notify._signature import (
    sign,
)
from hitl_nb.notify._targets import shown_url

if typing.TYPE_CHECKING:  # loaded on first use at run time (PEP 562)
    from hitl_nb.notify._addresses import AddressBook
    from hitl_nb.notify._channels import Channels
    from hitl_nb.notify._email import EmailChannel, SmtpSettings
    from hitl_nb.notify._hub_users import HubDirectory
    from hitl_nb.notify._messages import Message
    from hitl_nb.notify._registry import Registry, default_registry
    from hitl_nb.notify._routes import Preference, Router
    from hitl_nb.notify._sender import Sender
    from hitl_nb.notify._slack_api import SlackApi, check_slack_signature
    from hitl_nb.notify._slack_app import (
        SLACK_OPEN_ACTION,
        SlackAppChannel,
        SlackAppTarget,
        read_slack_action,
        slack_blocks,
    )
    from hitl_nb.notify._slack_modal import (
        MODAL_CALLBACK,
        MODAL_PREFIX,
        ModalField,
        modal_fields,
        modal_view,
        read_modal,
        read_modal_action,
        read_modal_metadata,
    )
    from hitl_nb.notify._slack_people import SlackPeople
    from hitl_nb.notify._webhooks import WebhookChannel

__all__ = [
    "AddressBook",
    "AnswerLinks",
    "Batch",
    "Channels",
    "EmailChannel",
    "HubDirectory",
    "Limits",
    "Message",
    "Note",
    "Outbox",
    "Preference",
    "PromptFacts",
    "Registry",
    "Router",
    "Secret",
    "Sender",
    "SmtpSettings",
    "Target",
    "TeamChannels",
    "WebhookChannel",
    "default_registry",
    "escalation_notes",
    "opened_notes",
    "outcome_notes",
    "person",
    "shown_url",
    "sign",
    "stale_reason",
    "team",
    "SLACK_OPEN_ACTION",
    "SlackApi",
    "SlackAppChannel",
    "SlackAppTarget",
    "SlackPeople",
    "check_slack_signature",
    "read_slack_action",
    "slack_blocks",
    "MODAL_CALLBACK",
    "MODAL_PREFIX",
    "ModalField",
    "modal_fields",
    "modal_view",
    "read_modal",
    "read_modal_action",
    "read_modal_metadata",
]

__getattr__, __dir__ = _lazy.attach(
    __name__,
    {
        "AddressBook": "_addresses",
        "Channels": "_channels",
        "EmailChannel": "_email",
        "SmtpSettings": "_email",
        "HubDirectory": "_hub_users",
        "Message": "_messages",
        "Registry": "_registry",
        "default_registry": "_registry",
        "Preference": "_routes",
        "Router": "_routes",
        "Sender": "_sender",
        "SlackApi": "_slack_api",
        "check_slack_signature": "_slack_api",
        "SLACK_OPEN_ACTION": "_slack_app",
        "SlackAppChannel": "_slack_app",
        "SlackAppTarget": "_slack_app",
        "read_slack_action": "_slack_app",
        "slack_blocks": "_slack_app",
        "SlackPeople": "_slack_people",
        "MODAL_CALLBACK": "_slack_modal",
        "MODAL_PREFIX": "_slack_modal",
        "ModalField": "_slack_modal",
        "modal_fields": "_slack_modal",
        "modal_view": "_slack_modal",
        "read_modal": "_slack_modal",
        "read_modal_action": "_slack_modal",
        "read_modal_metadata": "_slack_modal",
        "WebhookChannel": "_webhooks",
    },
)
