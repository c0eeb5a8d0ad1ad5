/**
 * The open prompts of this page's user, kept current without polling.
 *
 * The Jupyter server keeps the list (a relay of the gateway's feed, per user) and says on
 * its event bus when it changed: an event of `EVENT_SCHEMA` naming the relay (`feed`),
 * its run (`epoch`) and the change's number (`seq`), never a prompt. JupyterLab holds
 * one socket to that bus per page (`/api/events/subscribe`, reconnected by
 * `EventManager`); on each event this page reads what changed since the number it has
 * (`GET hitl/lab/prompts?epoch=&since=`) with its own login, so a page whose login
 * ended reads nothing, and shows nothing. One read at a time: events that come while a
 * read is on its way make one more read after it.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { Event, ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { EVENT_SCHEMA, Listing, Routes } from './contract';
import { soonestFirst } from './order';
import { IMe, IPromptItem, IPrompts, IPromptsChange, IStatus } from './tokens';

export { soonestFirst };

/** The open prompts of this page's user (see the module comment). */
export class PromptsModel implements IPrompts {
  constructor(options: PromptsModel.IOptions) {
    this._settings = options.serverSettings;
    options.events.connect(this._onEvent, this);
    document.addEventListener('visibilitychange', this._onVisible);
  }

  get items(): ReadonlyArray<IPromptItem> {
    return this._sorted;
  }

  get total(): number {
    return this._total;
  }

  get status(): IStatus {
    return this._status;
  }

  get me(): IMe | null {
    return this._me;
  }

  get source(): string {
    return this._source;
  }

  get kernelName(): string {
    return this._kernel;
  }

  get changed(): ISignal<IPrompts, IPromptsChange> {
    return this._changed;
  }

  get(key: string): IPromptItem | undefined {
    return this._items.get(key);
  }

  isForMe(item: IPromptItem): boolean {
    if (item.answered || item.state !== 'open') {
      return false;
    }
    // The one user of a server that cannot tell its users apart: every prompt is theirs.
    return item.may_answer || !(this._me?.identified ?? false);
  }

  dueAt(item: IPromptItem): number | null {
    return item.deadline_at === null
      ? null
      : item.deadline_at * 1000 - this._clockOffset;
  }

  async wholeQuestion(item: IPromptItem): Promise<string> {
    if (item.prompt_length <= item.prompt.length) {
      return item.prompt;
    }
    const url = URLExt.join(
      this._settings.baseUrl,
      Routes.prompts,
      encodeURIComponent(item.registration),
      encodeURIComponent(item.prompt_id)
    );
    const response = await ServerConnection.makeRequest(
      url,
      {},
      this._settings
    );
    if (!response.ok) {
      throw new Error(
        `the question could not be read (HTTP ${response.status})`
      );
    }
    const body = (await response.json()) as { prompt?: { prompt?: unknown } };
    const text = body.prompt?.prompt;
    return typeof text === 'string' ? text : item.prompt;
  }

  /** Read what changed now; resolves once the list is current. */
  async refresh(): Promise<void> {
    if (this._reading) {
      this._again = true;
      return this._reading;
    }
    this._reading = this._readUntilCurrent();
    try {
      await this._reading;
    } finally {
      this._reading = null;
    }
  }

  /** Stop listening. */
  dispose(): void {
    document.removeEventListener('visibilitychange', this._onVisible);
    window.clearTimeout(this._retry);
  }

  private async _readUntilCurrent(): Promise<void> {
    do {
      this._again = false;
      await this._readOnce();
    } while (this._again);
  }

  private async _readOnce(): Promise<void> {
    const query: string[] = [];
    if (this._epoch) {
      query.push(
        `epoch=${encodeURIComponent(this._epoch)}`,
        `since=${this._seq}`
      );
    }
    const url =
      URLExt.join(this._settings.baseUrl, Routes.prompts) +
      (query.length ? `?${query.join('&')}` : '');
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(url, {}, this._settings);
    } catch (reason) {
      this._unreachable(
        'the Jupyter server cannot be reached: the prompts are not current'
      );
      return;
    }
    if (response.status === 401 || response.status === 403) {
      this._loggedOut();
      return;
    }
    if (!response.ok) {
      this._unreachable(
        `the Jupyter server could not list the prompts (HTTP ${response.status})`
      );
      return;
    }
    this._failures = 0;
    this._apply((await response.json()) as Listing);
  }

  private _apply(listing: Listing): void {
    const reset = listing.full || listing.epoch !== this._epoch;
    const before = new Set(this._items.keys());
    const added: string[] = [];
    const removed: string[] = [];
    if (listing.full) {
      const next = new Map<string, IPromptItem>();
      for (const item of listing.items ?? []) {
        next.set(item.key, item);
      }
      for (const key of before) {
        if (!next.has(key)) {
          removed.push(key);
        }
      }
      this._items = next;
    } else {
      for (const item of listing.upsert ?? []) {
        this._items.set(item.key, item);
      }
      for (const key of listing.remove ?? []) {
        if (this._items.delete(key)) {
          removed.push(key);
        }
      }
    }
    for (const key of this._items.keys()) {
      if (!before.has(key) && !this._seen.has(key)) {
        added.push(key);
      }
      this._seen.add(key);
    }
    this._feed = listing.feed;
    this._epoch = listing.epoch;
    this._seq = listing.seq;
    this._total = listing.total;
    this._status = listing.status;
    this._me = listing.me;
    this._source = listing.source.kind;
    this._kernel = listing.kernel;
    this._clockOffset = listing.now * 1000 - Date.now();
    this._sorted = Array.from(this._items.values()).sort(soonestFirst);
    const initial = !this._loaded;
    this._loaded = true;
    this._changed.emit({ added, removed, reset, initial });
  }

  private _unreachable(message: string): void {
    const first = this._status.state !== 'unavailable';
    this._status = { state: 'unavailable', message };
    if (first) {
      this._changed.emit({
        added: [],
        removed: [],
        reset: false,
        initial: false
      });
    }
    // Tried again, less and less often, until the server answers (its event socket
    // reconnects by itself, and a page that comes back reads at once).
    this._failures += 1;
    const pause = Math.min(60, 2 ** Math.min(this._failures, 6)) * 1000;
    window.clearTimeout(this._retry);
    this._retry = window.setTimeout(() => void this.refresh(), pause);
  }

  private _loggedOut(): void {
    const removed = Array.from(this._items.keys());
    this._items.clear();
    this._sorted = [];
    this._total = 0;
    this._epoch = '';
    this._seq = 0;
    this._status = {
      state: 'logged-out',
      message: 'You are not logged in to this server: no prompts are shown.'
    };
    this._changed.emit({ added: [], removed, reset: true, initial: false });
  }

  private _onEvent(_: unknown, event: Event.Emission): void {
    if (event.schema_id !== EVENT_SCHEMA) {
      return;
    }
    const feed = event['feed'];
    const epoch = event['epoch'];
    const seq = event['seq'];
    if (this._feed && feed !== this._feed) {
      return; // another user's list on this server
    }
    if (epoch === this._epoch && typeof seq === 'number' && seq <= this._seq) {
      return; // read already
    }
    void this.refresh();
  }

  private _onVisible = (): void => {
    if (document.visibilityState === 'visible') {
      void this.refresh();
    }
  };

  private _settings: ServerConnection.ISettings;
  private _items = new Map<string, IPromptItem>();
  private _sorted: IPromptItem[] = [];
  private _seen = new Set<string>();
  private _total = 0;
  private _status: IStatus = { state: 'connecting', message: '' };
  private _me: IMe | null = null;
  private _source = '';
  private _kernel = 'python3';
  private _feed = '';
  private _epoch = '';
  private _seq = 0;
  private _clockOffset = 0;
  private _loaded = false;
  private _reading: Promise<void> | null = null;
  private _again = false;
  private _failures = 0;
  private _retry = 0;
  private _changed = new Signal<IPrompts, IPromptsChange>(this);
}

export namespace PromptsModel {
  export interface IOptions {
    serverSettings: ServerConnection.ISettings;
    /** The server's event bus, as JupyterLab receives it. */
    events: ISignal<unknown, Event.Emission>;
  }
}
