/**
 * The answer page's list as the gateway's feed keeps it (`page/feed.ts`): a snapshot
 * replaces the list at synced, never half read; upserts and removes after it; the
 * database away; bad events and bad items change nothing; soonest deadline first.
 */
import { PromptItem } from '../contract';
import { FeedSource, PromptList, readItem } from '../page/feed';
import { item } from './items';

function send(
  list: PromptList,
  event: string,
  body: unknown
): ReturnType<PromptList['apply']> {
  return list.apply(event, JSON.stringify(body));
}

function keys(list: PromptList): string[] {
  return list.items.map(i => i.key);
}

function snapshot(list: PromptList, items: PromptItem[]): void {
  send(list, 'reset', { total: items.length });
  send(list, 'upsert', { items });
  send(list, 'synced', { total: items.length });
}

describe('PromptList', () => {
  it('shows a snapshot only once it is whole', () => {
    const list = new PromptList();
    send(list, 'reset', { total: 2 });
    expect(send(list, 'upsert', { items: [item({ key: 'r/a' })] })).toBeNull();
    expect(list.items).toEqual([]);
    expect(list.loaded).toBe(false);
    send(list, 'upsert', { items: [item({ key: 'r/b' })] });
    expect(send(list, 'synced', { total: 2 })).toEqual({
      keys: [],
      whole: true
    });
    expect(keys(list)).toEqual(['r/a', 'r/b']);
    expect(list.total).toBe(2);
    expect(list.loaded).toBe(true);
  });

  it('applies upserts and removes after the snapshot', () => {
    const list = new PromptList();
    snapshot(list, [item({ key: 'r/a' }), item({ key: 'r/b' })]);
    const changed = item({ key: 'r/a', agreeing: 1, needed: 2 });
    expect(send(list, 'upsert', { items: [changed] })).toEqual({
      keys: ['r/a'],
      whole: false
    });
    expect(list.get('r/a')?.agreeing).toBe(1);
    expect(send(list, 'remove', { keys: ['r/b', 'r/unknown'] })).toEqual({
      keys: ['r/b'],
      whole: false
    });
    expect(keys(list)).toEqual(['r/a']);
  });

  it('replaces the whole list at a new snapshot (what left is gone)', () => {
    const list = new PromptList();
    snapshot(list, [item({ key: 'r/a' }), item({ key: 'r/b' })]);
    snapshot(list, [item({ key: 'r/c' })]);
    expect(keys(list)).toEqual(['r/c']);
  });

  it('orders by the soonest deadline, those without one last', () => {
    const list = new PromptList();
    snapshot(list, [
      item({ key: 'r/none', deadline_at: null }),
      item({ key: 'r/later', deadline_at: 2_000_000_000 }),
      item({ key: 'r/soon', deadline_at: 1_900_000_000 })
    ]);
    expect(keys(list)).toEqual(['r/soon', 'r/later', 'r/none']);
    send(list, 'upsert', {
      items: [item({ key: 'r/sooner', deadline_at: 1_800_000_000 })]
    });
    expect(keys(list)[0]).toBe('r/sooner');
  });

  it('keeps the list when the database is away, and says why', () => {
    const list = new PromptList();
    snapshot(list, [item({ key: 'r/a' })]);
    send(list, 'unavailable', { message: 'the database cannot be reached' });
    expect(list.problem).toBe('the database cannot be reached');
    expect(keys(list)).toEqual(['r/a']);
    send(list, 'synced', { total: 1 });
    expect(list.problem).toBe('');
  });

  it('ignores bad events and leaves out bad items', () => {
    const list = new PromptList();
    snapshot(list, [item({ key: 'r/a' })]);
    expect(list.apply('upsert', '{not json')).toBeNull();
    expect(list.apply('upsert', '[1, 2]')).toBeNull();
    expect(send(list, 'nonsense', { items: [] })).toBeNull();
    send(list, 'upsert', {
      items: [{ key: 'r/x' }, null, 'r/y', item({ key: 'r/b' })]
    });
    expect(keys(list)).toEqual(['r/a', 'r/b']);
  });

  it('takes a list read from the REST API', () => {
    const list = new PromptList();
    expect(list.replace([item({ key: 'r/a' })], 1)).toEqual({
      keys: [],
      whole: true
    });
    expect(list.loaded).toBe(true);
  });
});

describe('readItem', () => {
  it('reads odd members as absent, never as numbers they are not', () => {
    const read = readItem({
      ...item(),
      needed: 'two',
      deadline_at: 'soon',
      specific: ['bob', 7],
      may_answer: 'yes'
    });
    expect(read?.needed).toBe(1);
    expect(read?.deadline_at).toBeNull();
    expect(read?.specific).toEqual(['bob']);
    expect(read?.may_answer).toBe(false);
  });
});

/** An EventSource the test drives. */
class FakeSource {
  static CLOSED = 2;
  readyState = 1;
  listeners = new Map<string, (event: MessageEvent<string>) => void>();
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  closed = false;
  addEventListener(
    name: string,
    cb: (event: MessageEvent<string>) => void
  ): void {
    this.listeners.set(name, cb);
  }
  close(): void {
    this.closed = true;
  }
  emit(name: string, data: unknown): void {
    this.listeners.get(name)!({
      data: JSON.stringify(data)
    } as MessageEvent<string>);
  }
}

describe('FeedSource', () => {
  beforeAll(() => {
    (globalThis as unknown as { EventSource: unknown }).EventSource =
      FakeSource;
  });

  it('hands on the events and says when the browser gave up', () => {
    const events: string[] = [];
    const states: string[] = [];
    let made: FakeSource | null = null;
    const feed = new FeedSource(
      '/hitl/api/feed',
      { event: name => events.push(name), state: s => states.push(s) },
      () => (made = new FakeSource()) as unknown as EventSource
    );
    feed.open();
    made!.emit('reset', { total: 0 });
    made!.emit('synced', { total: 0 });
    made!.onerror!();
    made!.readyState = FakeSource.CLOSED;
    made!.onerror!();
    expect(events).toEqual(['reset', 'synced']);
    expect(states).toEqual(['reconnecting', 'closed']);
    expect(made!.closed).toBe(true);
  });
});
