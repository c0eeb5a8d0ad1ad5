/**
 * The list page: the prompts this person may answer (`GET {api}prompts?responder=me`
 * first, then the gateway's feed keeps them live), and, on demand, the others they can
 * see (`GET {api}prompts`, read again when the feed says something changed). When the
 * feed stops, the REST API says why (logged out, the database away, the network), and
 * the page tries again, less and less often.
 */
import { PromptItem } from '../contract';
import { Api, ApiFailure } from './api';
import { Clock } from './clock';
import { button, el } from './dom';
import { FeedSource, PromptList } from './feed';
import { isForMe, ListSection } from './list';
import { Shell } from './shell';
import { itemFromView, readViews } from './views';

/** The REST reads, as the API takes them. */
const MINE = 'prompts?responder=me&limit=5000';
const SEEN = 'prompts?limit=5000';

export class ListPage {
  constructor(
    private readonly _shell: Shell,
    private readonly _api: Api,
    private readonly _clock: Clock,
    private readonly _makeFeed: (
      handlers: FeedSource.IHandlers
    ) => FeedSource = handlers => new FeedSource(_api.feedUrl(), handlers)
  ) {
    const shell = this._shell;
    document.title = 'Prompts for you';
    shell.heading.textContent = 'Prompts for you';
    const mine = el('section', 'hitl-page-section');
    mine.setAttribute('aria-label', 'Prompts you may answer');
    this._mine = new ListSection(
      mine,
      shell.config,
      this._clock,
      'No open prompts for you. When an agent asks you, its prompt appears here.'
    );
    const others = el('section', 'hitl-page-section hitl-page-others');
    const title = el('h2', 'hitl-page-subtitle', 'Others you can see');
    title.id = 'hitl-page-others-title';
    others.setAttribute('aria-labelledby', title.id);
    this._toggle = button(
      'Show the others you can see',
      'hitl-page-toggle',
      () =>
        this._showOthers(this._toggle.getAttribute('aria-expanded') !== 'true')
    );
    this._toggle.setAttribute('aria-expanded', 'false');
    this._toggle.setAttribute('aria-controls', 'hitl-page-others');
    const body = el('div');
    body.id = 'hitl-page-others';
    body.hidden = true;
    this._othersBody = body;
    this._others = new ListSection(
      body,
      shell.config,
      this._clock,
      'Nobody else has an open prompt you can see.'
    );
    others.append(title, this._toggle, body);
    shell.body.append(mine, others);
    this._feed = this._makeFeed({
      event: (name, data) => this._onEvent(name, data),
      state: state => this._onState(state)
    });
  }

  /** The list as the feed keeps it (the tests read it). */
  readonly list = new PromptList();

  /** Read the list, then follow the feed. */
  async start(): Promise<void> {
    this._shell.say('Reading your prompts…');
    try {
      const reply = await this._api.read(MINE);
      this._noteClock(reply.date);
      const items = readViews(reply.body).map(v =>
        itemFromView(v, Date.now() + this._clock.offset, v.your_answer !== null)
      );
      if (!this.list.loaded) {
        this.list.replace(items, items.length);
      }
      this._shell.clear();
      this._shell.body.hidden = false;
      this._draw();
    } catch (reason) {
      this._failed(reason);
      // No list to show: only what went wrong, and what to do.
      this._shell.body.hidden = !this.list.loaded;
    }
    this._feed.open();
  }

  stop(): void {
    this._feed.close();
    window.clearTimeout(this._retry);
    window.clearTimeout(this._othersTimer);
  }

  private _noteClock(date: number | null): void {
    if (date !== null) {
      // The Date header has whole seconds: half a second is the best guess.
      this._clock.offset = date + 500 - Date.now();
    }
  }

  private _failed(reason: unknown, retry = () => void this.start()): void {
    const failure =
      reason instanceof Error ? reason : new Error(String(reason));
    this._shell.say('');
    this._shell.fail(failure, retry);
  }

  private _onEvent(name: string, data: string): void {
    const change = this.list.apply(name, data);
    if (name === 'unavailable') {
      this._shell.say(
        `The list may not be current: ${this.list.problem}. It updates again once the gateway can read its database.`
      );
    }
    if (name === 'synced') {
      this._failures = 0;
      this._shell.body.hidden = false;
      this._shell.clear();
      this._shell.say('');
    }
    if (change !== null) {
      this._schedule();
      if (this._othersShown) {
        this._readOthersSoon();
      }
    }
  }

  private _onState(state: 'open' | 'reconnecting' | 'closed'): void {
    if (state === 'reconnecting') {
      this._shell.say('Reconnecting to the live list…');
      return;
    }
    if (state === 'closed') {
      void this._diagnose();
    }
  }

  /** The feed gave up: ask the REST API why, say it, and follow again later. */
  private async _diagnose(): Promise<void> {
    this._failures += 1;
    const pause = Math.min(60, 2 ** Math.min(this._failures, 6)) * 1000;
    try {
      await this._api.read('prompts?responder=me&limit=1');
      this._shell.say('The live list stopped; reconnecting…');
    } catch (reason) {
      this._failed(reason, () => {
        this._failures = 0;
        this._shell.clear();
        void this.start();
      });
      if (reason instanceof ApiFailure && reason.kind === 'logged-out') {
        return; // nothing comes of trying again until they log in
      }
    }
    window.clearTimeout(this._retry);
    this._retry = window.setTimeout(() => this._feed.open(), pause);
  }

  /** Draw at the next frame (a burst of events is drawn once). */
  private _schedule(): void {
    if (!this._frame) {
      this._frame = requestAnimationFrame(() => {
        this._frame = 0;
        this._draw();
      });
    }
  }

  private _draw(): void {
    const items = this.list.items;
    const mine = items.filter(isForMe);
    const hidden = Math.max(0, this.list.total - items.length);
    this._mine.set(mine, mine.length + hidden);
    if (this._othersShown) {
      const fromFeed = items.filter(item => !isForMe(item));
      const keys = new Set(fromFeed.map(item => item.key));
      const more = this._seen.filter(
        item => !keys.has(item.key) && this.list.get(item.key) === undefined
      );
      const others = [...fromFeed, ...more];
      this._others.set(others, others.length);
    }
  }

  private _showOthers(show: boolean): void {
    this._othersShown = show;
    this._othersBody.hidden = !show;
    this._toggle.setAttribute('aria-expanded', String(show));
    this._toggle.textContent = show
      ? 'Hide the others'
      : 'Show the others you can see';
    if (show) {
      void this._readOthers();
    }
  }

  private _readOthersSoon(): void {
    window.clearTimeout(this._othersTimer);
    this._othersTimer = window.setTimeout(() => void this._readOthers(), 1000);
  }

  private async _readOthers(): Promise<void> {
    try {
      const reply = await this._api.read(SEEN);
      this._noteClock(reply.date);
      const now = Date.now() + this._clock.offset;
      this._seen = readViews(reply.body)
        .map(v => itemFromView(v, now, v.your_answer !== null))
        .filter(item => !isForMe(item));
      this._draw();
    } catch (reason) {
      this._failed(reason, () => void this._readOthers());
    }
  }

  private _mine: ListSection;
  private _others: ListSection;
  private _othersBody: HTMLElement;
  private _toggle: HTMLButtonElement;
  private _othersShown = false;
  private _seen: PromptItem[] = [];
  private _feed: FeedSource;
  private _frame = 0;
  private _failures = 0;
  private _retry = 0;
  private _othersTimer = 0;
}
