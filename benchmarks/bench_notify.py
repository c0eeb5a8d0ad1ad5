"""The notification sender's own cost: from a note written to the outbox to the message
at the SMTP server or the webhook receiver, and its CPU per message, next to sending the
same message directly (no outbox), in one run.

    python benchmarks/bench_notify.py [--messages 200] [--rate 20] [--burst 10000]

The receivers (aiosmtpd, and a plain HTTP receiver) run in a child process that notes
when each message arrives (its ``Message-ID`` or ``Idempotency-Key``, which is the
note's key). This process runs a :class:`hitl_nb.notify.Sender` over the tests' SQLite
outbox (the one store will be another database, in the gateway's transactions), woken
after each write, as the gateway will wake it.

1. **Written to arrived**, median and p95: ``--messages`` notes, one every ``1/--rate``
   seconds, each for another person (email) or the team channel (webhook), so no limit
   holds any back. The peer: the same messages handed to the channel directly
   (``EmailChannel.deliver``, ``WebhookChannel.deliver``) at the same pace: what the
   outbox, the claim and the marks add.
2. **CPU per message** in this process (the sender, the outbox's SQLite, composing,
   the channels' client side), for the outbox path and the direct one.
3. **The burst**: ``--burst`` prompts opened at once for ten people and the team
   channel: how many messages the sender sends, and how long until the outbox holds
   nothing due.

The prompt-opened-to-message figure of docs/notify.md needs the gateway and comes with
the wiring; this measures what the sender adds. The load average is printed with every
figure.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402
from hitl_nb.notify import (  # noqa: E402
    AddressBook,
    AnswerLinks,
    Batch,
    Channels,
    EmailChannel,
    Note,
    PromptFacts,
    Router,
    Sender,
    SmtpSettings,
    TeamChannels,
    WebhookChannel,
    opened_notes,
)
from hitl_nb.notify._email import EmailTarget  # noqa: E402
from hitl_nb.notify._messages import compose  # noqa: E402
from hitl_nb.notify._slack import SlackTarget  # noqa: E402
from tests.helpers.outbox_sqlite import SQLiteOutbox  # noqa: E402

LINKS = AnswerLinks("https://hub.example.org/", hub=True)


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def stats(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"median {statistics.median(ms):7.1f} ms   p95 {p95(ms):7.1f} ms   (n={len(ms)})"


# -- the receivers, in a child process -------------------------------------------------


def receivers(pipe: Connection) -> None:
    """Serve SMTP and HTTP on 127.0.0.1; send the ports; on "arrivals", send
    ``{key: time}``; on "stop", stop."""
    sys.path.insert(0, str(ROOT))
    from tests.helpers.smtp import Inbox, smtp_server
    from tests.helpers.tiny_server import Conn, Request, serve

    arrivals: dict[str, float] = {}

    class Timed(Inbox):
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
            for line in bytes(envelope.content).split(b"\r\n"):
                if line.lower().startswith(b"message-id:"):
                    key = line.split(b"<", 1)[1].split(b"@", 1)[0].decode()
                    arrivals[key] = time.time()
            return "250 OK"

    def hook(request: Request, conn: Conn) -> None:
        arrivals[request.header("idempotency-key") or ""] = time.time()
        conn.answer({"ok": True})

    with smtp_server(inbox=Timed()) as smtp, serve(hook) as http:
        pipe.send((smtp.port, http.url))
        while True:
            what = pipe.recv()
            if what == "stop":
                break
            pipe.send(dict(arrivals))


# -- the runs --------------------------------------------------------------------------


def facts(i: int, team: bool) -> PromptFacts:
    # each webhook message to a team channel of its own (one per agent host), so that
    # none is held back into a digest and each arrives under its note's key
    return PromptFacts(
        "r1",
        f"p{i}",
        f"https://agent{i}.example.org/",
        f"Deploy build {i} to production?",
        registered_by="Alice",
        deadline=time.time() + 3600,
        specific=() if team else (f"user{i}",),
    )


def notes(i: int, now: float, teams: TeamChannels) -> list[Note]:
    return [n for n in opened_notes(facts(i, i % 2 == 1), teams, now) if n.kind == "opened"]


def channels(smtp_port: int) -> Channels:
    email = EmailChannel(
        SmtpSettings(
            host="127.0.0.1",
            port=smtp_port,
            security="none",
            sender="hitl@example.org",
            helo="bench.invalid",
        )
    )
    return Channels(email=email, webhooks=WebhookChannel(timeout=10))


def team_channels(hook: str, count: int) -> TeamChannels:
    target = SlackTarget(hook + "/team", admin=True)
    return TeamChannels({f"agent{i}.example.org": target for i in range(count)} | {"*": target})


async def through_outbox(
    folder: Path, smtp_port: int, hook: str, count: int, rate: float
) -> tuple[dict[str, float], float]:
    teams = team_channels(hook, count)
    outbox = SQLiteOutbox(folder / "outbox.sqlite")
    router = Router(addresses=AddressBook(template="{name}@example.org"), teams=teams)
    sender = Sender(outbox, router, channels(smtp_port), LINKS)
    sender.start()
    written: dict[str, float] = {}
    cpu = time.process_time()
    for i in range(count):
        now = time.time()
        batch = notes(i, now, teams)
        outbox.add_now(batch)
        sender.wake()
        written.update({n.key: now for n in batch})
        await asyncio.sleep(1 / rate)
    while outbox.states().get("pending"):
        await asyncio.sleep(0.05)
    used = time.process_time() - cpu
    await sender.stop()
    await sender.channels.aclose()
    outbox.close()
    return written, used


async def direct(
    smtp_port: int, hook: str, count: int, rate: float
) -> tuple[dict[str, float], float]:
    chans = channels(smtp_port)
    team = SlackTarget(hook + "/team", admin=True)
    teams = team_channels(hook, count)
    written: dict[str, float] = {}
    sends = []
    cpu = time.process_time()
    for i in range(count):
        now = time.time()
        (note,) = notes(i, now, teams)
        message = compose(Batch(note.recipient, "t", (note,), 1), LINKS, now)
        target = team if note.recipient.startswith("team:") else EmailTarget(f"user{i}@example.org")
        written[note.key] = now
        sends.append(asyncio.ensure_future(chans.deliver(message, target)))
        await asyncio.sleep(1 / rate)
    await asyncio.gather(*sends)
    used = time.process_time() - cpu
    await chans.aclose()
    return written, used


async def burst(folder: Path, smtp_port: int, hook: str, size: int) -> tuple[int, float]:
    teams = TeamChannels({"*": SlackTarget(hook + "/team", admin=True)})
    outbox = SQLiteOutbox(folder / "burst.sqlite")
    router = Router(addresses=AddressBook(template="{name}@example.org"), teams=teams)
    sender = Sender(outbox, router, channels(smtp_port), LINKS)
    now = time.time()
    everything = []
    for i in range(size):
        # one agent: its prompts for anyone all go to the one team channel
        f = PromptFacts(
            "r1",
            f"p{i}",
            "https://agent.example.org/",
            f"Deploy build {i}?",
            specific=() if i % 11 == 10 else (f"user{i % 10}",),
        )
        everything += [n for n in opened_notes(f, teams, now) if n.kind == "opened"]
    start = time.perf_counter()
    outbox.add_now(everything)
    sent = 0
    while True:
        done = await sender.round()
        sent += done.sent
        if not done.claimed:
            break
    drained = time.perf_counter() - start
    await sender.channels.aclose()
    outbox.close()
    return sent, drained


def latencies(written: dict[str, float], arrivals: dict[str, float]) -> list[float]:
    missing = [k for k in written if k not in arrivals]
    assert not missing, f"{len(missing)} messages never arrived"
    return [arrivals[k] - t for k, t in written.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--burst", type=int, default=10_000)
    args = parser.parse_args()

    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe()
    child = context.Process(target=receivers, args=(there,), daemon=True)
    child.start()
    smtp_port, hook = here.recv()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            print(f"written to arrived, {args.messages} messages at {args.rate:g}/s")
            via, via_cpu = asyncio.run(
                through_outbox(folder, smtp_port, hook, args.messages, args.rate)
            )
            here.send("arrivals")
            outbox_lat = latencies(via, here.recv())
            print(f"  through the outbox   {stats(outbox_lat)}   {load()}")
            straight, straight_cpu = asyncio.run(direct(smtp_port, hook, args.messages, args.rate))
            here.send("arrivals")
            direct_lat = latencies(straight, here.recv())
            print(f"  sent directly        {stats(direct_lat)}   {load()}")
            print(
                f"  ratio (outbox / direct): median "
                f"{statistics.median(outbox_lat) / statistics.median(direct_lat):.2f}, "
                f"p95 {p95(outbox_lat) / p95(direct_lat):.2f}"
            )
            print("CPU per message in this process")
            per_via = via_cpu * 1000 / args.messages
            per_direct = straight_cpu * 1000 / args.messages
            print(f"  through the outbox   {per_via:6.2f} ms   {load()}")
            print(f"  sent directly        {per_direct:6.2f} ms   ratio {per_via / per_direct:.2f}")
            sent, drained = asyncio.run(burst(folder, smtp_port, hook, args.burst))
            print(
                f"burst: {args.burst} prompts for 10 people and the team channel -> "
                f"{sent} messages, drained in {drained:.2f} s   {load()}"
            )
    finally:
        here.send("stop")
        child.join(10)


if __name__ == "__main__":
    end_on_sigterm()
    main()
