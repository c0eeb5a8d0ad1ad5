/**
 * Notifications through JupyterLab's own Notification API, and the tab's title.
 *
 * - One notification per new prompt for this user ("Answer", and "Show card" when its
 *   card is in a notebook open here); prompts that are not this user's are not told.
 * - Bursts coalesce: prompts that come together (or within 3 s of the last one told)
 *   are one notification that says how many ("50 prompts for you came in"), with "Open
 *   the prompts panel", and every prompt that comes while it is up makes its count
 *   grow. At most 3 notifications of the last minute up at once: an agent that asks
 *   again and again (10,000 prompts, one by one) makes one notification, not a storm.
 * - A reminder before the deadline (`reminderMinutes`, 5 by default); prompts due at
 *   about the same time are one reminder. A new prompt first seen closer to its
 *   deadline than that gets none (its notification says the time left); one already
 *   waiting when the page opens gets its reminder at once.
 * - Prompts already waiting when the page opens are not new: the badge and the status
 *   bar count them, no notification tells them.
 * - A prompt's notification goes when the prompt leaves the list (answered elsewhere).
 * - While the page is hidden its title carries the count: "(2) JupyterLab".
 *
 * What the Settings Editor sets (schema/plugin.json): `notifications`, `reminders`,
 * `reminderMinutes`, `titleCount`.
 */
import { Notification } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';

import { CardPlaces } from './places';
import { CommandIDs, IPromptItem, IPrompts, IPromptsChange } from './tokens';
import { cut, prompts, timeLeft } from './words';

/** What the notifications do, as the Settings Editor sets it. */
export interface INotifierSettings {
  notifications: boolean;
  reminders: boolean;
  reminderMinutes: number;
  titleCount: boolean;
}

export const DEFAULT_SETTINGS: INotifierSettings = {
  notifications: true,
  reminders: true,
  reminderMinutes: 5,
  titleCount: true
};

/** A prompt this soon after the last one told joins it in one notification (ms). */
const BURST_MS = 3_000;
/** At most this many notifications up from the last minute; more prompts join one that
 * says how many. */
const RATE_LIMIT = 3;
const RATE_WINDOW_MS = 60_000;
/** The room a question has in a notification's 140 characters. */
const QUESTION_ROOM = 72;

export class Notifier {
  constructor(
    private _model: IPrompts,
    private _commands: CommandRegistry,
    private _places: CardPlaces
  ) {
    _model.changed.connect(this._onChanged, this);
    document.addEventListener('visibilitychange', this._onVisibility);
    const title = document.querySelector('title');
    if (title) {
      this._observer = new MutationObserver(() => this._retitle());
      this._observer.observe(title, {
        childList: true,
        characterData: true,
        subtree: true
      });
    }
  }

  /** The notification ids of this page's prompts (new, burst, reminders), for tests. */
  get shown(): ReadonlyArray<string> {
    return Array.from(new Set([...this._byKey.values(), ...this._reminders]));
  }

  /** Apply new settings (the reminders are planned again). */
  configure(settings: INotifierSettings): void {
    this._settings = settings;
    this._plan();
    this._retitle();
  }

  dispose(): void {
    this._model.changed.disconnect(this._onChanged, this);
    document.removeEventListener('visibilitychange', this._onVisibility);
    this._observer?.disconnect();
    window.clearTimeout(this._timer);
  }

  private _onChanged(_: IPrompts, change: IPromptsChange): void {
    for (const key of change.removed) {
      const id = this._byKey.get(key);
      this._byKey.delete(key);
      if (id !== undefined && !Array.from(this._byKey.values()).includes(id)) {
        Notification.dismiss(id);
      }
    }
    const model = this._model;
    const fresh = change.added
      .map(key => model.get(key))
      .filter(
        (item): item is IPromptItem => item !== undefined && model.isForMe(item)
      );
    if (!change.initial && fresh.length && this._settings.notifications) {
      this._tell(fresh);
      for (const item of fresh) {
        this._told.add(item.key);
      }
    }
    this._plan();
    this._retitle();
  }

  private _tell(fresh: IPromptItem[]): void {
    const now = Date.now();
    const shown = (id: string | undefined): id is string =>
      id !== undefined && Notification.manager.has(id);
    const burst = this._burst;
    if (burst && shown(burst.id)) {
      // A burst's notification takes every prompt that comes while it is up.
      this._grow(burst, fresh);
      return;
    }
    // Notifications of the last minute still up (one dismissed made room for the next).
    this._recent = this._recent.filter(
      made => now - made.at < RATE_WINDOW_MS && shown(made.id)
    );
    const single = this._lastSingle;
    const joins =
      single !== null && now - single.at < BURST_MS && shown(single.id);
    if (fresh.length === 1 && !joins && this._recent.length < RATE_LIMIT) {
      const item = fresh[0];
      const id = Notification.info(this._single('A prompt for you', item), {
        autoClose: false,
        actions: this._actions(item)
      });
      this._lastSingle = { id, at: now };
      this._recent.push({ id, at: now });
      this._byKey.set(item.key, id);
      return;
    }
    if (joins && single !== null) {
      // The prompt told a moment ago and these: one notification that says how many.
      const grown = { id: single.id, count: 1 };
      this._burst = grown;
      this._lastSingle = null;
      this._grow(grown, fresh);
      return;
    }
    const id = Notification.info(this._burstWords(fresh.length), {
      autoClose: false,
      actions: [this._openPanel()]
    });
    this._burst = { id, count: fresh.length };
    this._recent.push({ id, at: now });
    for (const item of fresh) {
      this._byKey.set(item.key, id);
    }
  }

  private _grow(
    burst: { id: string; count: number },
    fresh: IPromptItem[]
  ): void {
    burst.count += fresh.length;
    Notification.update({
      id: burst.id,
      message: this._burstWords(burst.count),
      type: 'info',
      autoClose: false,
      actions: [this._openPanel()]
    });
    for (const item of fresh) {
      this._byKey.set(item.key, burst.id);
    }
  }

  private _burstWords(count: number): string {
    return `${prompts(count)} for you came in`;
  }

  private _single(lead: string, item: IPromptItem): string {
    const due = this._model.dueAt(item);
    const left = due === null ? '' : ` (${timeLeft(due, Date.now())})`;
    const room = QUESTION_ROOM - left.length;
    return `${lead}: “${cut(item.prompt.replace(/\s+/g, ' ').trim(), room)}”${left}`;
  }

  private _actions(item: IPromptItem): Notification.IAction[] {
    const actions: Notification.IAction[] = [];
    if (item.may_answer) {
      actions.push({
        label: 'Answer',
        caption: 'Answer it in the prompts panel',
        displayType: 'accent',
        callback: () => {
          void this._commands.execute(CommandIDs.answer, { key: item.key });
        }
      });
    }
    if (this._places.find(item)) {
      actions.push({
        label: 'Show card',
        caption: 'Open the notebook at the cell that shows its card',
        callback: () => {
          void this._commands.execute(CommandIDs.showCard, { key: item.key });
        }
      });
    }
    if (!actions.length) {
      actions.push(this._openPanel());
    }
    return actions;
  }

  private _openPanel(): Notification.IAction {
    return {
      label: 'Open the prompts panel',
      displayType: 'accent',
      callback: () => {
        void this._commands.execute(CommandIDs.openPanel);
      }
    };
  }

  /** Plan the next reminder (one timer for all). */
  private _plan(): void {
    window.clearTimeout(this._timer);
    if (!this._settings.reminders) {
      return;
    }
    const ahead = this._settings.reminderMinutes * 60_000;
    const now = Date.now();
    let next = Infinity;
    for (const item of this._model.items) {
      const due = this._model.dueAt(item);
      if (
        due === null ||
        this._reminded.has(item.key) ||
        !this._model.isForMe(item)
      ) {
        continue;
      }
      const at = due - ahead;
      if (at <= now && this._told.has(item.key)) {
        this._reminded.add(item.key); // its notification said the time left
        continue;
      }
      next = Math.min(next, at);
    }
    if (next < Infinity) {
      // Timers longer than about 24.8 days overflow: plan again on the way.
      const wait = Math.max(0, Math.min(next - now, 2 ** 31 - 1));
      this._timer = window.setTimeout(() => this._remind(), wait);
    }
  }

  private _remind(): void {
    const ahead = this._settings.reminderMinutes * 60_000;
    const now = Date.now() + 1000;
    const due: IPromptItem[] = [];
    for (const item of this._model.items) {
      const at = this._model.dueAt(item);
      if (
        at === null ||
        this._reminded.has(item.key) ||
        !this._model.isForMe(item)
      ) {
        continue;
      }
      if (at - ahead <= now) {
        due.push(item);
        this._reminded.add(item.key);
      }
    }
    if (due.length) {
      const id =
        due.length === 1
          ? Notification.warning(this._single('Due soon', due[0]), {
              autoClose: false,
              actions: this._actions(due[0])
            })
          : Notification.warning(
              `${prompts(due.length)} for you are due within ${this._settings.reminderMinutes} minutes`,
              { autoClose: false, actions: [this._openPanel()] }
            );
      this._reminders.push(id);
      for (const item of due) {
        this._byKey.set(item.key, id);
      }
    }
    this._plan();
  }

  private _onVisibility = (): void => this._retitle();

  /** "(2) JupyterLab" while the page is hidden and prompts wait; the title as it was else. */
  private _retitle(): void {
    const count = this._model.items.filter(item =>
      this._model.isForMe(item)
    ).length;
    const current = document.title;
    const bare = current.replace(/^\(\d[\d,]*\) /, '');
    const wanted =
      this._settings.titleCount && document.hidden && count > 0
        ? `(${count.toLocaleString()}) ${bare}`
        : bare;
    if (current !== wanted) {
      document.title = wanted; // the observer sees this too: it then finds nothing to do
    }
  }

  private _settings: INotifierSettings = DEFAULT_SETTINGS;
  private _told = new Set<string>();
  private _reminded = new Set<string>();
  private _byKey = new Map<string, string>();
  private _reminders: string[] = [];
  private _burst: { id: string; count: number } | null = null;
  private _lastSingle: { id: string; at: number } | null = null;
  private _recent: { id: string; at: number }[] = [];
  private _timer = 0;
  private _observer: MutationObserver | null = null;
}
