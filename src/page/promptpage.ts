/**
 * One prompt: its question as text (S-1), its deadline counting down, who may answer,
 * how a consensus' answers stand (never what others answered: the gateway's view does
 * not carry it), and its form (`renderForm` of `src/form`) with a Submit button. The
 * reply is said in the card's words (`words.ts`); a 422's problems go on the fields.
 * Then the page follows the feed: when the prompt changes or leaves the list, the
 * gateway's view is read again and the final outcome shown ("the agent accepted the
 * answer (2 people agreed: alice, carol)").
 *
 * A prompt that takes no answer from this person (theirs to see but not to answer,
 * answered, expired, closed) shows why, and no form.
 */
import { agentName, cut, timeLeft } from '../words';
import { Api, ApiFailure, failureOf } from './api';
import { Clock } from './clock';
import { IPromptRef } from './config';
import { button, el, foreign } from './dom';
import { FeedSource, PromptList } from './feed';
import { Shell } from './shell';
import { IPromptView, readViews } from './views';
import {
  IOutcome,
  lostOutcome,
  replyOutcome,
  statusLabel,
  tallyWords,
  viewOutcome,
  whoMayAnswer
} from './words';

/** A problem with an answer, by JSON Pointer ("" for the whole answer). */
export interface IProblem {
  pointer: string;
  message: string;
}

/** What the page needs of a drawn form (`IRenderedForm` of `src/form`). */
export interface IFormLike {
  readonly element: HTMLElement;
  value(): { ok: true; value: unknown } | { ok: false; problems: IProblem[] };
  showErrors(errors: IProblem[]): void;
  clearErrors(): void;
  dispose(): void;
}

/** `renderForm` of `src/form`, as the page calls it. */
export type RenderForm = (
  host: HTMLElement,
  schema: unknown,
  options?: { value?: unknown; idPrefix?: string; document?: Document }
) => IFormLike;

/** The characters of a question shown before "Show the whole question". */
export const LONG = 600;

export class PromptPage {
  constructor(
    private readonly _shell: Shell,
    private readonly _api: Api,
    private readonly _clock: Clock,
    private readonly _ref: IPromptRef,
    private readonly _render: RenderForm,
    private readonly _makeFeed: (
      handlers: FeedSource.IHandlers
    ) => FeedSource = handlers => new FeedSource(_api.feedUrl(), handlers)
  ) {
    this._key = `${_ref.registration}/${_ref.prompt_id}`;
    document.title = 'A prompt for you';
    this._shell.heading.textContent = 'A prompt for you';
    this._feed = this._makeFeed({
      event: (name, data) => this._onEvent(name, data),
      state: () => undefined
    });
  }

  /** The prompt as last read (null before, or when it is not there). */
  get view(): IPromptView | null {
    return this._view;
  }

  /** Read the prompt, draw it, follow the feed. */
  async start(): Promise<void> {
    const found = await this._read();
    if (found) {
      this._draw();
      this._feed.open();
    }
  }

  stop(): void {
    this._feed.close();
    window.clearTimeout(this._again);
    this._form?.dispose();
  }

  /** Read the gateway's view of the prompt; false when it could not be read. */
  private async _read(): Promise<boolean> {
    const path = `tasks/${encodeURIComponent(this._ref.registration)}/prompts`;
    try {
      const reply = await this._api.get(path);
      if (reply.status === 404) {
        this._gone();
        return false;
      }
      if (reply.status >= 400) {
        throw failureOf(reply, this._shell.config.host);
      }
      if (reply.date !== null) {
        this._clock.offset = reply.date + 500 - Date.now();
      }
      const view = readViews(reply.body).find(
        v => v.prompt_id === this._ref.prompt_id
      );
      if (view === undefined) {
        this._gone();
        return false;
      }
      this._view = view;
      this._readAt = Date.now();
      this._shell.clear();
      return true;
    } catch (reason) {
      this._shell.fail(
        reason instanceof Error ? reason : new Error(String(reason)),
        () => void this.start()
      );
      return false;
    }
  }

  private _gone(): void {
    this._shell.heading.textContent = 'Prompt not found';
    this._shell.body.replaceChildren(
      el(
        'p',
        'hitl-page-note',
        'This prompt is not here: the link may be wrong or cut short, or the prompt is ' +
          'not yours to see. The list shows every prompt for you.'
      ),
      this._back()
    );
  }

  private _back(): HTMLElement {
    const nav = el('nav', 'hitl-page-links');
    nav.setAttribute('aria-label', 'More');
    const list = el('a', 'hitl-page-link', 'All your prompts');
    list.href = this._shell.config.page;
    nav.appendChild(list);
    const lab = this._shell.config.lab;
    if (lab !== null) {
      const open = el('a', 'hitl-page-link', 'Open in JupyterLab');
      open.href = lab;
      nav.appendChild(open);
    }
    return nav;
  }

  /** The prompt, whole: question, facts, outcome, form. */
  private _draw(): void {
    const view = this._view!;
    const body = this._shell.body;
    body.replaceChildren();
    const question = foreign(
      'p',
      'hitl-page-question hitl-page-question-whole',
      view.prompt
    );
    question.id = 'hitl-page-question';
    body.appendChild(question);
    if (Array.from(view.prompt).length > LONG) {
      // A long question is cut, so that the form is within reach on a phone.
      question.textContent = cut(view.prompt, LONG);
      const whole = button('Show the whole question', 'hitl-page-more', () => {
        const open = whole.getAttribute('aria-expanded') === 'true';
        question.textContent = open ? cut(view.prompt, LONG) : view.prompt;
        whole.textContent = open ? 'Show the whole question' : 'Show less';
        whole.setAttribute('aria-expanded', String(!open));
      });
      whole.setAttribute('aria-expanded', 'false');
      whole.setAttribute('aria-controls', question.id);
      body.appendChild(whole);
    }
    this._facts = el('dl', 'hitl-page-details');
    this._outcome = el('div', 'hitl-page-outcome');
    this._outcome.setAttribute('role', 'status');
    this._outcome.setAttribute('aria-live', 'polite');
    body.append(this._facts, this._outcome);
    this._drawFacts();
    const closed = viewOutcome(
      view,
      this._shell.config.me.name,
      this._shell.config.host
    );
    if (closed === null) {
      this._drawForm(view);
    } else {
      this._show(closed);
    }
    body.appendChild(this._back());
  }

  private _drawFacts(): void {
    const view = this._view!;
    const facts: [string, HTMLElement | string][] = [];
    const due =
      view.seconds_left === null
        ? null
        : (this._readAt + view.seconds_left * 1000 + this._clock.offset) / 1000;
    if (view.state === 'open') {
      facts.push(['Deadline', this._clock.countdown(due)]);
    } else if (view.state === 'expired') {
      facts.push(['Deadline', 'passed']);
    }
    facts.push([
      'Who may answer',
      whoMayAnswer({
        specific: view.policy.specific,
        needed: view.policy.needed
      })
    ]);
    const tally = tallyWords({ ...view, needed: view.policy.needed });
    if (tally) {
      facts.push(['Answers so far', tally]);
    }
    if (view.forwarded_for && view.forwarded_for.length) {
      facts.push(['Answered by', view.forwarded_for.join(', ')]);
    }
    facts.push(['Agent', agentName(view.agent_url)]);
    const nodes: HTMLElement[] = [];
    for (const [term, value] of facts) {
      const row = el('div', 'hitl-page-fact');
      const dd = el('dd');
      if (typeof value === 'string') {
        dd.textContent = value;
        dd.dir = 'auto';
      } else {
        dd.appendChild(value);
      }
      row.append(el('dt', '', term), dd);
      nodes.push(row);
    }
    this._facts.replaceChildren(...nodes);
  }

  private _drawForm(view: IPromptView): void {
    const form = el('form', 'hitl-page-form');
    form.setAttribute('aria-labelledby', 'hitl-page-question');
    form.noValidate = true;
    const host = el('div', 'hitl-page-fields');
    form.appendChild(host);
    try {
      this._form = this._render(host, view.response_schema, {
        idPrefix: 'hitl-answer'
      });
    } catch (reason) {
      this._show({
        status: 'failed',
        message: `this prompt's form cannot be drawn here (${String(reason)}); answer it in JupyterLab`,
        details: [],
        openAgain: false,
        errors: []
      });
      return;
    }
    const submit = el('button', 'hitl-page-button hitl-page-submit', 'Submit');
    submit.type = 'submit';
    form.appendChild(submit);
    form.addEventListener('submit', event => {
      event.preventDefault();
      void this._submit();
    });
    this._formNode = form;
    this._submitButton = submit;
    this._shell.body.insertBefore(form, this._outcome.nextSibling);
  }

  private async _submit(): Promise<void> {
    const form = this._form;
    const view = this._view;
    if (!form || !view || this._sending) {
      return;
    }
    form.clearErrors();
    const entered = form.value();
    if (!entered.ok) {
      form.showErrors(entered.problems);
      this._show({
        status: 'invalid',
        message: 'the answer does not match the form; nothing was sent',
        details: [],
        openAgain: true,
        errors: []
      });
      return;
    }
    this._sending = true;
    this._submitButton!.disabled = true;
    const host = this._shell.config.host;
    this._show({
      status: 'sending',
      message: `the answer is on its way to ${host}`,
      details: [],
      openAgain: true,
      errors: []
    });
    let result: IOutcome;
    const path =
      `tasks/${encodeURIComponent(view.registration)}/prompts/` +
      `${encodeURIComponent(view.prompt_id)}/answer`;
    try {
      const reply = await this._api.post(path, { payload: entered.value });
      result = replyOutcome(
        reply,
        this._shell.config.me.name ?? this._shell.config.me.display,
        view.policy.needed,
        host
      );
      if (reply.status === 401) {
        this._shell.fail(
          new ApiFailure(
            'logged-out',
            `You are not logged in to ${host} any more.`,
            401
          )
        );
      }
    } catch {
      result = lostOutcome(host);
    }
    this._sending = false;
    this._submitButton!.disabled = false;
    this._answered =
      this._answered || ['accepted', 'held'].includes(result.status);
    if (result.errors.length) {
      form.showErrors(result.errors);
    }
    this._show(result);
    if (!result.openAgain) {
      this._closeForm();
    }
    this._readAgain(0);
  }

  private _closeForm(): void {
    this._form?.dispose();
    this._form = null;
    this._formNode?.remove();
    this._formNode = null;
  }

  /** The status line (and its details), in the live region. */
  private _show(outcome: IOutcome): void {
    const line = el('p', `hitl-page-status hitl-page-status-${outcome.status}`);
    line.append(
      el('strong', '', `${statusLabel(outcome.status)}: `),
      foreign('span', '', outcome.message)
    );
    const nodes: HTMLElement[] = [line];
    for (const detail of outcome.details.filter(Boolean)) {
      nodes.push(foreign('p', 'hitl-page-status-detail', detail));
    }
    this._outcome.replaceChildren(...nodes);
    this._outcome.dataset.status = outcome.status;
    this._shown = outcome;
  }

  private _onEvent(name: string, data: string): void {
    const change = this._changes.apply(name, data);
    if (change === null) {
      return;
    }
    if (change.whole || change.keys.includes(this._key)) {
      this._readAgain(300);
    }
  }

  /** Read the view again soon and show what changed (the final outcome, once known). */
  private _readAgain(delay: number): void {
    window.clearTimeout(this._again);
    this._again = window.setTimeout(() => void this._refresh(), delay);
  }

  private async _refresh(): Promise<void> {
    if (!(await this._read())) {
      return;
    }
    const view = this._view!;
    this._drawFacts();
    const now = viewOutcome(
      view,
      this._shell.config.me.name,
      this._shell.config.host
    );
    if (now === null) {
      if (!this._form && !this._answered) {
        this._drawForm(view); // open again (a forward that failed)
      }
      return;
    }
    if (now.status === this._shown?.status) {
      // Nothing new but the numbers: the same line (the reply's words), new counts.
      this._show({ ...now, message: this._shown.message });
      return;
    }
    if (view.state !== 'open' || !this._form) {
      this._closeForm();
      this._show(now);
    }
  }

  /** The countdown's words now (the tests read them). */
  deadlineWords(now = Date.now()): string {
    const view = this._view;
    if (!view || view.seconds_left === null) {
      return 'no deadline';
    }
    return timeLeft(this._readAt + view.seconds_left * 1000, now);
  }

  private _key: string;
  private _view: IPromptView | null = null;
  private _readAt = 0;
  private _feed: FeedSource;
  private _changes = new PromptList();
  private _facts!: HTMLElement;
  private _outcome!: HTMLElement;
  private _form: IFormLike | null = null;
  private _formNode: HTMLElement | null = null;
  private _submitButton: HTMLButtonElement | null = null;
  private _shown: IOutcome | null = null;
  private _sending = false;
  private _answered = false;
  private _again = 0;
}
