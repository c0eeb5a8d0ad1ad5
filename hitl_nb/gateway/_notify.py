"""The gateway's notifications: who is told what, and the sender, from the settings.

:class:`Notifier` is what a gateway that notifies holds (docs/notify.md): built by the
host from :class:`~hitl_nb.gateway.GatewaySettings` (SMTP, team channels, the
allow-list of people's webhook hosts, where addresses come from, the reminder's lead,
the rate), it

- makes the notes each change writes, in the change's own transaction: a prompt first
  seen (:meth:`Notifier.opened`: the people it names, else the team channel of its
  agent's host, with a reminder before the deadline), and what became of it
  (:meth:`Notifier.outcome`: forwarded, refused by the agent, expired, for the task's
  registrant);
- runs the :class:`~hitl_nb.notify.Sender` over the store's outbox
  (:attr:`~hitl_nb.gateway.GatewayStore.outbox`) in the background of the host's loop,
  from :meth:`Notifier.start` (the gateway's start) to :meth:`Notifier.stop` (its
  close), woken when notes are written. Nothing an answer does waits for it.

Every setting is checked when the notifier is made, so a host with a wrong one stops at
start, saying which (never a secret's value). A person's note goes nowhere when no
channel could reach people (no SMTP server and no webhook hosts allowed): none is
written.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hitl_nb._choices import one_choice
from hitl_nb.errors import NotifyRefused
from hitl_nb.gateway._outbox import NotifyChoice
from hitl_nb.gateway._schema import audience
from hitl_nb.gateway._settings import GatewaySettings
from hitl_nb.gateway._slack_board import SlackBoard
from hitl_nb.gateway._slack_store import SlackPost
from hitl_nb.gateway._store import GatewayStore, PromptRow, Registration
from hitl_nb.notify import (
    AddressBook,
    AnswerLinks,
    Channels,
    EmailChannel,
    HubDirectory,
    Limits,
    Message,
    Note,
    Preference,
    PromptFacts,
    Registry,
    Router,
    Secret,
    Sender,
    SlackApi,
    SlackAppChannel,
    SlackAppTarget,
    SlackPeople,
    SmtpSettings,
    TeamChannels,
    WebhookChannel,
    default_registry,
    escalation_notes,
    modal_fields,
    opened_notes,
    outcome_notes,
    person,
    shown_url,
    slack_blocks,
    team,
)

__all__ = ["Notifier", "SlackSetup", "team_channels"]

log = logging.getLogger("hitl_nb.notify")


def team_channels(given: Mapping[str, Any], kinds: Registry | None = None) -> TeamChannels:
    """The administrator's team channels (agent host or ``*`` -> a Slack-compatible
    webhook's URL, ``"KIND:URL"`` for another kind that takes a URL alone
    (``"teams:https://..."``), or a mapping: ``{"kind": KIND, "url": ...}``, or
    ``{"url", "secret_env" | "secret_file"}`` for a signed one; read by ``kinds``, the
    channel kinds); :class:`~hitl_nb.errors.NotifyRefused` naming the host whose entry
    is wrong (never the URL: its path is a credential)."""
    kinds = kinds or default_registry()
    targets: dict[str, Any] = {}
    for host, spec in given.items():
        what = f"the team channel for {host!r}"
        url = spec.get("url") if isinstance(spec, Mapping) else spec
        try:
            targets[host] = kinds.team_target(spec)
        except NotifyRefused as exc:
            words = str(exc)
            if isinstance(url, str) and url:  # its path is a credential: scheme and host only
                words = words.replace(repr(url), shown_url(url)).replace(url, shown_url(url))
            raise NotifyRefused(f"{what}: {words}") from None
    return TeamChannels(targets)


@dataclasses.dataclass(frozen=True)
class SlackSetup:
    """A Slack app's parts (docs/notify.md): its Web API with the bot token, the
    signing secret its requests are checked with, who its users are here, and the
    board that keeps its messages up to date."""

    api: SlackApi
    secret: Secret
    people: SlackPeople
    board: SlackBoard


def _secret(settings: GatewaySettings, name: str, what: str) -> Secret | None:
    """The secret named by the settings ``{name}_env`` / ``{name}_file`` (None: neither),
    read once now so a missing one stops the start, naming the setting."""
    env, file = getattr(settings, f"{name}_env"), getattr(settings, f"{name}_file")
    if env and file:
        raise NotifyRefused(f"{name}_env and {name}_file: {what} comes from one place")
    if not env and not file:
        return None
    secret = Secret(env=env) if env else Secret(file=file)
    try:
        secret.read()
    except NotifyRefused as exc:
        raise NotifyRefused(f"{name}_{'env' if env else 'file'}: {what}: {exc}") from None
    return secret


class Notifier:
    """Notifications for one gateway (see the module docstring). ``link_base``: the
    address links open at (read when the sender starts: a server knows its own port
    only then); ``hub``: links go through the hub's ``user-redirect``; ``directory``:
    the hub's users (who exists, their auth state's email); ``owner``: this replica;
    ``kinds``: the channel kinds (default: the package's); ``page``: the answer page's
    path under ``link_base`` (``hitl/answer/``, ``services/hitl/answer/``), where links
    open unless ``notify_answer_links`` is ``lab`` (None: the host serves no page, links
    open JupyterLab)."""

    def __init__(
        self,
        settings: GatewaySettings,
        store: GatewayStore,
        link_base: Callable[[], str],
        *,
        hub: bool,
        directory: HubDirectory | None = None,
        owner: str | None = None,
        kinds: Registry | None = None,
        page: str | None = None,
    ) -> None:
        self.settings = settings
        self._page = page
        self.kinds = kinds or default_registry()
        self.store = store
        self._link_base = link_base
        self._hub = hub
        self.directory = directory
        self.owner = owner
        self.teams = team_channels(settings.notify_team_webhooks, self.kinds)
        self.smtp = self._smtp(settings) if settings.notify_smtp_host else None
        self.limits = Limits(every=settings.notify_every)
        self.addresses = AddressBook(
            table={str(k): str(v) for k, v in settings.notify_addresses.items()},
            template=settings.notify_address_template or None,
            directory=directory,
        )
        #: People can be reached at all (email, or webhooks of their own).
        self.people = bool(settings.notify_smtp_host or settings.notify_webhook_hosts)
        self.remind_before = settings.notify_remind_before or None
        self.sender: Sender | None = None
        #: Told of each message's end: its channel's kind, its result and the notes it
        #: told (the metrics, the traces).
        self.delivered: Callable[[str, str, Sequence[Note]], None] | None = None
        #: The Slack app (None: no team channel is one).
        self.slack = self._slack_app(settings, store)
        # a Slack app's users get personal messages from it
        self.people = self.people or self.slack is not None

    def _slack_app(self, settings: GatewaySettings, store: GatewayStore) -> SlackSetup | None:
        used = any(isinstance(t, SlackAppTarget) for t in self.teams.targets.values())
        token = _secret(settings, "notify_slack_token", "the Slack app's bot token")
        if not used:
            return None
        if token is None:
            raise NotifyRefused(
                "a team channel is a Slack app: set notify_slack_token_env (or _file), "
                "where its bot token is"
            )
        secret = _secret(settings, "notify_slack_signing_secret", "the Slack app's signing secret")
        if secret is None:
            raise NotifyRefused(
                "a team channel is a Slack app: set notify_slack_signing_secret_env (or "
                "_file), where its signing secret is (its buttons' clicks are checked with it)"
            )
        try:
            api = SlackApi(token, settings.notify_slack_api_url)
        except NotifyRefused as exc:
            raise NotifyRefused(f"notify_slack_api_url: {exc}") from None
        table = settings.notify_slack_users
        if not all(isinstance(k, str) and k and isinstance(v, str) and v for k, v in table.items()):
            raise NotifyRefused("notify_slack_users: Slack user ids to user names, both text")
        people = SlackPeople(
            table, api, self.addresses, match_email=settings.notify_slack_match_email
        )
        return SlackSetup(api, secret, people, SlackBoard(store, api))

    async def _posted(self, message: Message, channel: str, ts: str) -> None:
        """A Slack app's message went: kept, to be updated with what becomes of it."""
        if self.slack is None or len(message.items) != 1 or message.kind == "outcome":
            return
        facts = message.items[0].facts
        post = SlackPost(
            channel,
            ts,
            facts.reg_id,
            facts.prompt_id,
            slack_blocks(message),
            message.chat(),
            "",
            False,
        )
        await self.store.slack.record(post, time.time())
        self.slack.board.wake()  # it may have changed already

    @staticmethod
    def _smtp(settings: GatewaySettings) -> SmtpSettings:
        if not settings.notify_from:
            raise NotifyRefused("email needs notify_from, the address messages come from")
        env, file = settings.notify_smtp_password_env, settings.notify_smtp_password_file
        if env and file:
            raise NotifyRefused("the SMTP password comes from one place: an env variable or a file")
        password = Secret(env=env) if env else Secret(file=file) if file else None
        return SmtpSettings(
            host=settings.notify_smtp_host,
            sender=settings.notify_from,
            port=settings.notify_smtp_port,
            security=settings.notify_smtp_security,
            user=settings.notify_smtp_user or None,
            password=password,
            ca_file=settings.notify_smtp_ca_file or None,
        )

    # -- what is told --------------------------------------------------------------------

    def _facts(
        self, reg: Registration, envelope: Mapping[str, Any], deadline: float | None
    ) -> PromptFacts:
        names, needed = audience(dict(envelope))
        question = envelope.get("prompt")
        return PromptFacts(
            reg_id=reg.id,
            prompt_id=str(envelope.get("prompt_id") or ""),
            agent_url=reg.agent_url,
            question=question if isinstance(question, str) else "",
            registered_by=reg.registered_by,
            registrant=reg.registrant,
            deadline=deadline,
            specific=tuple(names),
            needed=needed,
            choices=tuple(c.label for c in one_choice(envelope.get("response_schema"))),
            form=bool(modal_fields(envelope.get("response_schema"))),
        )

    def _reachable(self, notes: Sequence[Note]) -> list[Note]:
        return [n for n in notes if self.people or not n.recipient.startswith("user:")]

    def opened(
        self, reg: Registration, envelope: Mapping[str, Any], deadline: float | None
    ) -> Callable[[float], list[Note]]:
        """The notes a prompt's first sighting writes, given when it was first seen."""
        facts = self._facts(reg, envelope, deadline)

        def notes(now: float) -> list[Note]:
            made = opened_notes(facts, self.teams, now, remind_before=self.remind_before)
            return self._reachable(made)

        return notes

    def outcome(
        self,
        reg: Registration,
        row: PromptRow,
        outcome: str,
        responders: Sequence[str] = (),
        detail: str | None = None,
        now: float | None = None,
    ) -> list[Note]:
        """The note that tells ``reg``'s registrant what became of ``row``."""
        facts = dataclasses.replace(
            self._facts(reg, row.envelope, row.deadline),
            outcome=outcome,
            responders=tuple(responders),
            detail=detail,
        )
        return self._reachable(outcome_notes(facts, time.time() if now is None else now))

    def escalated(
        self,
        reg: Registration,
        row: PromptRow,
        to: Sequence[str],
        channel: str | None,
        now: float | None = None,
    ) -> list[Note]:
        """The notes that tell ``to`` (user names) and the team ``channel`` that ``row``
        still waits (an ``escalate`` deadline policy); a channel no longer set is left
        out."""
        recipients = [person(name) for name in to]
        if channel is not None and self.teams.target(channel) is not None:
            recipients.append(team(channel))
        facts = self._facts(reg, row.envelope, row.deadline)
        made = escalation_notes(facts, recipients, time.time() if now is None else now)
        return self._reachable(made)

    # -- a person's own choice -----------------------------------------------------------

    async def _preference(self, name: str) -> Preference | None:
        choice = await self.store.outbox.preference(name)
        if choice is None:
            return None
        hook = None
        if choice.webhook:
            try:  # checked when it was set: its host again at each send
                hook = self.kinds.own_target(choice.webhook)
            except NotifyRefused:  # its kind no longer takes a URL alone: email, as if none
                log.warning("hitl-nb notify: %s's own webhook is of no known kind", name)
        return Preference(off=choice.off, webhook=hook)

    def check_webhook(self, url: str) -> str:
        """A person's own webhook (a URL, Slack-compatible; or ``"teams:URL"``), if its
        kind takes one and its host is on the allow-list; else
        :class:`~hitl_nb.errors.NotifyRefused` saying why."""
        self.kinds.own_target(url, self.settings.notify_webhook_hosts)
        return url

    async def choice(self, name: str) -> NotifyChoice:
        """``name``'s choice (messages on, email, when they made none)."""
        return await self.store.outbox.preference(name) or NotifyChoice()

    # -- the sender ----------------------------------------------------------------------

    def start(self) -> None:
        """Start sending in the background of the running loop."""
        if self.sender is not None:
            return
        base = self._link_base()
        page = None
        if self._page is not None and self.settings.notify_answer_links == "page":
            page = base.rstrip("/") + "/" + self._page.lstrip("/")
        links = AnswerLinks(base, hub=self._hub, page=page)
        email = EmailChannel(self.smtp) if self.smtp is not None else None
        webhooks = WebhookChannel(lambda: self.settings.notify_webhook_hosts, kinds=self.kinds)
        slack_users = self.slack.people.slack_id_of if self.slack is not None else None
        router = Router(
            addresses=self.addresses,
            teams=self.teams,
            preferences=self._preference,
            slack=slack_users,
        )
        slack = SlackAppChannel(self.slack.api, self._posted) if self.slack is not None else None
        self.sender = Sender(
            self.store.outbox,
            router,
            Channels(email=email, webhooks=webhooks, kinds=self.kinds, **{"slack-app": slack}),
            links,
            limits=self.limits,
            owner=self.owner,
            delivered=self.delivered,
        )
        self.sender.start()
        if self.slack is not None:
            self.slack.board.start()
        log.info("hitl-nb notify: sending (links open at %s)", links.page or links.base_url)

    def wake(self) -> None:
        """Notes were written: the sender looks now."""
        if self.sender is not None:
            self.sender.wake()

    async def stop(self) -> None:
        """Stop sending (a message under way finishes, or is sent again after its
        claim's lease); close the channels."""
        sender, self.sender = self.sender, None
        if self.slack is not None:
            await self.slack.board.stop()
        if sender is not None:
            await sender.stop()
            await sender.channels.aclose()
        if self.directory is not None:
            await self.directory.aclose()
