/**
 * The open prompts of this person, kept live by the gateway's feed (`GET {api}feed`,
 * server-sent events: `hitl_nb/gateway/_feed.py`; the events' shapes are the contract's
 * `Feed*`). `PromptList` applies the events (no DOM, no network: the unit tests drive
 * it); `FeedSource` holds the `EventSource` and says when the feed stopped (then the
 * page asks the REST API why: the browser does not tell an event stream's status).
 *
 * reset  a snapshot follows: its upserts are gathered apart and replace the list at
 *        synced (a list is never shown half read)
 * upsert prompts added or changed; remove: prompts that left
 * synced everything since the last synced is whole; `total` counts them all
 * unavailable  the gateway's database cannot be reached (the list is kept, marked)
 */
import { PromptItem } from '../contract';
import { soonestFirst } from '../order';

/** What one event changed: `keys` added, changed or removed; `whole`: a new list. */
export interface IListChange {
  keys: string[];
  whole: boolean;
}

function record(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A feed item as the page can draw it (null: not one: left out, never drawn half). */
export function readItem(value: unknown): PromptItem | null {
  if (
    !record(value) ||
    typeof value.key !== 'string' ||
    typeof value.registration !== 'string' ||
    typeof value.prompt_id !== 'string' ||
    typeof value.prompt !== 'string'
  ) {
    return null;
  }
  const number = (v: unknown, d: number): number =>
    typeof v === 'number' && Number.isFinite(v) ? v : d;
  const strings = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
  const due = value.deadline_at;
  return {
    ...(value as unknown as PromptItem),
    prompt_length: number(value.prompt_length, value.prompt.length),
    deadline_at: typeof due === 'number' && Number.isFinite(due) ? due : null,
    first_seen: number(value.first_seen, 0),
    specific: strings(value.specific),
    allowed_responders: strings(value.allowed_responders),
    needed: Math.max(1, Math.floor(number(value.needed, 1))),
    answers: number(value.answers, 0),
    agreeing: number(value.agreeing, 0),
    may_answer: value.may_answer === true,
    answered: value.answered === true,
    disagreement: value.disagreement === true,
    why_not: typeof value.why_not === 'string' ? value.why_not : null
  };
}

/** The list the feed keeps (see the module comment). */
export class PromptList {
  /** The prompts, soonest deadline first. */
  get items(): ReadonlyArray<PromptItem> {
    if (this._sorted === null) {
      this._sorted = Array.from(this._items.values()).sort(soonestFirst);
    }
    return this._sorted;
  }

  /** How many open prompts there are in all (the list holds at most 10,000). */
  get total(): number {
    return this._total;
  }

  /** Has a whole list been read (a snapshot and its synced). */
  get loaded(): boolean {
    return this._loaded;
  }

  /** Why the list may not be current (the gateway's words), or "". */
  get problem(): string {
    return this._problem;
  }

  get(key: string): PromptItem | undefined {
    return this._items.get(key);
  }

  /** Take a whole list read elsewhere (the REST API) as it is. */
  replace(items: ReadonlyArray<PromptItem>, total: number): IListChange {
    this._items = new Map(items.map(item => [item.key, item]));
    this._sorted = null;
    this._total = total;
    this._loaded = true;
    return { keys: [], whole: true };
  }

  /** Apply one event of the feed (`data` as sent: JSON text). Bad data changes nothing. */
  apply(event: string, data: string): IListChange | null {
    let body: unknown;
    try {
      body = JSON.parse(data);
    } catch {
      return null;
    }
    if (!record(body)) {
      return null;
    }
    switch (event) {
      case 'reset':
        this._incoming = new Map();
        return null;
      case 'upsert': {
        const items = Array.isArray(body.items) ? body.items : [];
        const keys: string[] = [];
        const into = this._incoming ?? this._items;
        for (const raw of items) {
          const item = readItem(raw);
          if (item !== null) {
            into.set(item.key, item);
            keys.push(item.key);
          }
        }
        return this._changed(keys);
      }
      case 'remove': {
        const listed = Array.isArray(body.keys) ? body.keys : [];
        const into = this._incoming ?? this._items;
        const keys = listed.filter(
          (k): k is string => typeof k === 'string' && into.delete(k)
        );
        return this._changed(keys);
      }
      case 'synced': {
        this._total =
          typeof body.total === 'number' ? body.total : this._items.size;
        this._problem = '';
        if (this._incoming !== null) {
          this._items = this._incoming;
          this._incoming = null;
          this._sorted = null;
          this._loaded = true;
          return { keys: [], whole: true };
        }
        this._loaded = true;
        return { keys: [], whole: false };
      }
      case 'unavailable':
        this._problem =
          typeof body.message === 'string'
            ? body.message
            : "the gateway's database cannot be reached";
        return { keys: [], whole: false };
      default:
        return null;
    }
  }

  private _changed(keys: string[]): IListChange | null {
    if (this._incoming !== null) {
      return null; // shown at synced, whole
    }
    this._sorted = null;
    return keys.length ? { keys, whole: false } : null;
  }

  private _items = new Map<string, PromptItem>();
  private _incoming: Map<string, PromptItem> | null = null;
  private _sorted: PromptItem[] | null = null;
  private _total = 0;
  private _loaded = false;
  private _problem = '';
}

/** The feed's events, as `FeedSource` hands them on. */
export const FEED_EVENTS = [
  'reset',
  'upsert',
  'remove',
  'synced',
  'unavailable'
] as const;

/** The gateway's feed over one `EventSource` (see the module comment). */
export class FeedSource {
  constructor(
    private readonly _url: string,
    private readonly _handlers: FeedSource.IHandlers,
    private readonly _make: (url: string) => EventSource = url =>
      new EventSource(url, { withCredentials: true })
  ) {}

  /** Open the feed (again). */
  open(): void {
    this.close();
    const source = this._make(this._url);
    for (const name of FEED_EVENTS) {
      source.addEventListener(name, event => {
        this._handlers.event(name, (event as MessageEvent<string>).data);
      });
    }
    source.onopen = () => this._handlers.state('open');
    source.onerror = () => {
      // CONNECTING: the browser reconnects by itself; CLOSED: it gave up (a status
      // other than 200, or not an event stream: the page asks why).
      this._handlers.state(
        source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting'
      );
      if (source.readyState === EventSource.CLOSED) {
        this.close();
      }
    };
    this._source = source;
  }

  close(): void {
    this._source?.close();
    this._source = null;
  }

  private _source: EventSource | null = null;
}

export namespace FeedSource {
  export interface IHandlers {
    event(name: string, data: string): void;
    state(state: 'open' | 'reconnecting' | 'closed'): void;
  }
}
