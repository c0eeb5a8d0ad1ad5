/**
 * The model of the open prompts (`model.ts`) against a fake server: the first list,
 * the changes since a number, a new run of the relay, the events it reads on and those
 * it ignores, one read at a time, a login that ended, a server that cannot be reached.
 */
import { Event, ServerConnection } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import { EVENT_SCHEMA, Listing, PromptItem } from '../contract';
import { PromptsModel, soonestFirst } from '../model';
import { IPromptsChange } from '../tokens';
import { item } from './items';

const NOW = 1_800_000_000;

function listing(changes: Partial<Listing>): Listing {
  return {
    feed: 'user:alice',
    epoch: 'e1',
    seq: 1,
    status: { state: 'ok', message: '', where: "this server's gateway" },
    source: { kind: 'server', where: "this server's gateway" },
    total: 0,
    now: NOW,
    me: { name: 'alice', display_name: 'Alice', identified: true },
    kernel: 'python3',
    full: true,
    items: [],
    ...changes
  };
}

/** A server that answers each read with the next of `answers` and records the URLs. */
class FakeServer {
  urls: string[] = [];
  answers: Array<Listing | number | Error> = [];
  /** Reads wait for this, when set (to see what comes while one is on its way). */
  gate: Promise<void> | null = null;

  fetch = async (request: Request): Promise<Response> => {
    this.urls.push(request.url);
    if (this.gate) {
      await this.gate;
    }
    const answer = this.answers.shift();
    if (answer === undefined) {
      throw new Error(`no answer for ${request.url}`);
    }
    if (answer instanceof Error) {
      throw answer;
    }
    if (typeof answer === 'number') {
      return new Response('{}', { status: answer });
    }
    return new Response(JSON.stringify(answer), {
      status: 200,
      headers: { 'Content-Type': 'application/json' }
    });
  };

  /** Each read's query, without the timestamp that keeps caches out of it. */
  get queries(): string[] {
    return this.urls.map(url => new URL(url).search.replace(/[?&]\d+$/, ''));
  }
}

function setUp(): {
  server: FakeServer;
  events: Signal<unknown, Event.Emission>;
  model: PromptsModel;
  changes: IPromptsChange[];
} {
  const server = new FakeServer();
  const serverSettings = ServerConnection.makeSettings({
    baseUrl: 'http://localhost:8888/',
    fetch: server.fetch as typeof fetch,
    token: ''
  });
  const events = new Signal<unknown, Event.Emission>({});
  const model = new PromptsModel({ serverSettings, events });
  const changes: IPromptsChange[] = [];
  model.changed.connect((_, change) => changes.push(change));
  return { server, events, model, changes };
}

function emission(feed: string, epoch: string, seq: number): Event.Emission {
  return { schema_id: EVENT_SCHEMA, feed, epoch, seq };
}

/** Until what an event started is done (the fake server answers at once). */
async function settled(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await new Promise(resolve => setTimeout(resolve, 0));
  }
}

const soon = item({ key: 'r1/soon', deadline_at: NOW + 60 });
const later = item({ key: 'r1/later', deadline_at: NOW + 600 });
const never = item({ key: 'r2/never', first_seen: NOW - 100 });
const neverOlder = item({ key: 'r2/older', first_seen: NOW - 500 });

describe('soonestFirst', () => {
  it('puts the soonest deadline first, then no deadline, the longest waiting first', () => {
    const sorted = [never, later, neverOlder, soon].sort(soonestFirst);
    expect(sorted.map(i => i.key)).toEqual([
      'r1/soon',
      'r1/later',
      'r2/older',
      'r2/never'
    ]);
  });

  it('orders by key when all else is equal', () => {
    const a = item({ key: 'a/1' });
    const b = item({ key: 'b/1' });
    expect([b, a].sort(soonestFirst)).toEqual([a, b]);
    expect(soonestFirst(a, a)).toBe(0);
  });
});

describe('PromptsModel', () => {
  it('reads the whole list first: sorted, counted, nothing new', async () => {
    const { server, model, changes } = setUp();
    server.answers.push(
      listing({ items: [never, later, soon], total: 3, seq: 4 })
    );
    await model.refresh();
    expect(server.queries).toEqual(['']);
    expect(model.items.map(i => i.key)).toEqual([
      'r1/soon',
      'r1/later',
      'r2/never'
    ]);
    expect(model.total).toBe(3);
    expect(model.status.state).toBe('ok');
    expect(model.me?.name).toBe('alice');
    expect(model.source).toBe('server');
    expect(changes).toEqual([
      {
        added: ['r2/never', 'r1/later', 'r1/soon'],
        removed: [],
        reset: true,
        initial: true
      }
    ]);
    model.dispose();
  });

  it('then reads only what changed since its number, on an event of its feed', async () => {
    const { server, events, model, changes } = setUp();
    server.answers.push(listing({ items: [soon, later], seq: 4 }));
    await model.refresh();
    const changed: PromptItem = { ...later, answers: 1 };
    server.answers.push(
      listing({
        full: false,
        items: undefined,
        seq: 6,
        upsert: [changed, never],
        remove: ['r1/soon', 'r9/unknown']
      })
    );
    events.emit(emission('user:alice', 'e1', 6));
    await settled();
    expect(server.queries).toEqual(['', '?epoch=e1&since=4']);
    expect(model.items.map(i => i.key)).toEqual(['r1/later', 'r2/never']);
    expect(model.get('r1/later')?.answers).toBe(1);
    expect(changes[1]).toEqual({
      added: ['r2/never'],
      removed: ['r1/soon'],
      reset: false,
      initial: false
    });
    model.dispose();
  });

  it('ignores events it has read already, of another feed or schema', async () => {
    const { server, events, model } = setUp();
    server.answers.push(listing({ seq: 4 }));
    await model.refresh();
    events.emit(emission('user:alice', 'e1', 4)); // read already
    events.emit(emission('user:alice', 'e1', 3));
    events.emit(emission('user:bob', 'e1', 9)); // another user's list
    events.emit({
      schema_id: 'urn:another:event',
      feed: 'user:alice',
      epoch: 'e1',
      seq: 9
    });
    await settled();
    expect(server.urls).toHaveLength(1);
    model.dispose();
  });

  it('takes a new run of the relay as a whole new list', async () => {
    const { server, events, model, changes } = setUp();
    server.answers.push(listing({ items: [soon, later], seq: 40 }));
    await model.refresh();
    // The server restarted: its relay's numbers start again, under another epoch.
    server.answers.push(listing({ epoch: 'e2', seq: 1, items: [later] }));
    events.emit(emission('user:alice', 'e2', 1));
    await settled();
    expect(server.queries[1]).toBe('?epoch=e1&since=40');
    expect(model.items.map(i => i.key)).toEqual(['r1/later']);
    expect(changes[1]).toEqual({
      added: [],
      removed: ['r1/soon'],
      reset: true,
      initial: false
    });
    server.answers.push(
      listing({
        epoch: 'e2',
        seq: 2,
        full: false,
        items: undefined,
        upsert: [],
        remove: []
      })
    );
    await model.refresh();
    expect(server.queries[2]).toBe('?epoch=e2&since=1');
    model.dispose();
  });

  it('never tells of a prompt twice, even after it left and came back', async () => {
    const { server, model, changes } = setUp();
    server.answers.push(listing({ items: [soon] }));
    await model.refresh();
    server.answers.push(listing({ seq: 2, items: [] }));
    await model.refresh();
    server.answers.push(listing({ seq: 3, items: [soon] }));
    await model.refresh();
    expect(changes.map(c => c.added)).toEqual([['r1/soon'], [], []]);
    model.dispose();
  });

  it('reads once more for every event that comes while a read is on its way', async () => {
    const { server, events, model } = setUp();
    let open: () => void = () => undefined;
    server.gate = new Promise(resolve => (open = resolve));
    server.answers.push(listing({ seq: 1 }), listing({ seq: 3 }));
    const first = model.refresh();
    events.emit(emission('user:alice', 'e1', 2));
    events.emit(emission('user:alice', 'e1', 3));
    open();
    await first;
    expect(server.urls).toHaveLength(2);
    model.dispose();
  });

  it('corrects deadlines for the difference between its clock and the server', async () => {
    const { server, model } = setUp();
    // The server's clock is 30 s ahead of this page's.
    const pageNow = Date.now();
    server.answers.push(
      listing({ now: pageNow / 1000 + 30, items: [soon, never] })
    );
    await model.refresh();
    const due = model.dueAt(model.get('r1/soon')!)!;
    const expected = (NOW + 60) * 1000 - 30_000;
    expect(Math.abs(due - expected)).toBeLessThan(1000);
    expect(model.dueAt(model.get('r2/never')!)).toBeNull();
    model.dispose();
  });

  it('counts as this user\u2019s only the open prompts they may answer and did not', async () => {
    const { server, model } = setUp();
    server.answers.push(listing({}));
    await model.refresh();
    expect(model.isForMe(item())).toBe(true);
    expect(model.isForMe(item({ answered: true }))).toBe(false);
    expect(model.isForMe(item({ state: 'forwarding' }))).toBe(false);
    expect(model.isForMe(item({ may_answer: false }))).toBe(false);
    model.dispose();
  });

  it('counts every prompt as the one user\u2019s of a server that names nobody', async () => {
    const { server, model } = setUp();
    server.answers.push(
      listing({
        me: { name: null, display_name: 'anonymous', identified: false }
      })
    );
    await model.refresh();
    expect(model.isForMe(item({ may_answer: false }))).toBe(true);
    model.dispose();
  });

  it('shows nothing once the login ended, and reads the whole list after', async () => {
    const { server, model, changes } = setUp();
    server.answers.push(listing({ items: [soon], seq: 5 }), 403);
    await model.refresh();
    await model.refresh();
    expect(model.items).toEqual([]);
    expect(model.total).toBe(0);
    expect(model.status.state).toBe('logged-out');
    expect(changes[1]).toEqual({
      added: [],
      removed: ['r1/soon'],
      reset: true,
      initial: false
    });
    server.answers.push(listing({ items: [soon], seq: 6 }));
    await model.refresh();
    expect(server.queries[2]).toBe(''); // no epoch: the whole list
    model.dispose();
  });

  it('says once that the server cannot be reached, and keeps what it had', async () => {
    const { server, model, changes } = setUp();
    server.answers.push(
      listing({ items: [soon] }),
      new TypeError('network down'),
      500
    );
    await model.refresh();
    await model.refresh();
    await model.refresh();
    expect(model.status.state).toBe('unavailable');
    expect(model.status.message).toContain(
      'could not list the prompts (HTTP 500)'
    );
    expect(model.items.map(i => i.key)).toEqual(['r1/soon']);
    expect(changes).toHaveLength(2); // the first list, then "unavailable" once
    model.dispose(); // and its retry with it
  });
});
