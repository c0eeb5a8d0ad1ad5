/**
 * The panel's answer form: the prompt's `response_schema` drawn in the page
 * (`renderForm`, no kernel), its answer sent where the notebook's card would send it
 * (`POST hitl/lab/prompts/<registration>/<prompt_id>/answer`: this server's gateway as
 * the page's user, or the hub's hitl service with the owner's token) with the page's own
 * login (ServerConnection: its token and XSRF), and what became of it said in the card's
 * words (`outcome.ts`). The gateway decides who answers (S-3).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { Routes } from './contract';
import { IFieldError, IRenderedForm, renderForm } from './form';
import { HUB, IOutcome, outcomeOf, SERVER, tallyWords } from './outcome';
import { IPromptItem } from './tokens';
import { whoMayAnswer } from './words';

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A gateway JSON Pointer path as the form's (a "/"-less path is read as one). */
function pointer(path: string): string {
  return path === '' || path.startsWith('/') ? path : `/${path}`;
}

export class AnswerCard extends Widget {
  constructor(options: AnswerCard.IOptions) {
    super();
    this._settings = options.serverSettings;
    this._who = options.who;
    this.addClass('hitl-lab-card');
    this._card = el('div', 'hitl-card hitl-lab-form-card');
    this.node.append(this._card);
  }

  /** The form drawn now, if any. */
  get form(): IRenderedForm | null {
    return this._form;
  }

  /** Draw ``item``'s form; resolves once it is ready to answer. */
  async open(item: IPromptItem): Promise<void> {
    this._item = item;
    this._form?.dispose();
    this._form = null;
    this._card.textContent = '';
    delete this._card.dataset.key;
    const view = await this._read(item);
    if (this._item !== item) {
      return; // another prompt was asked for meanwhile
    }
    const question = el(
      'p',
      'hitl-lab-form-question',
      typeof view.prompt === 'string' ? view.prompt : item.prompt
    );
    question.dir = 'auto';
    // Who may answer, without the count: the tally below is the count kept current.
    const meta = el('p', 'hitl-lab-form-meta', whoMayAnswer(item, false));
    meta.dir = 'auto';
    const host = el('div', 'hitl-lab-form-host');
    this._card.append(question, meta, host);
    const form = renderForm(host, view.response_schema ?? {}, {
      idPrefix: `hitl-lab-${this._serial++}-`
    });
    this._form = form;
    const submit = el(
      'button',
      'jp-Button hitl-lab-button jp-mod-accept hitl-f-form-button hitl-lab-submit',
      'Submit'
    );
    submit.type = 'button';
    const status = el('div', 'hitl-lab-outcome');
    status.setAttribute('role', 'status');
    status.setAttribute('aria-live', 'polite');
    status.dir = 'auto';
    const tally = el('div', 'hitl-lab-tally');
    this._card.append(submit, status, tally);
    this._status = status;
    this._tally = tally;
    this._submit = submit;
    if (view.state && view.state !== 'open') {
      this._say(
        'closed',
        `This prompt is ${JSON.stringify(view.state)}: it takes no answer now.`
      );
      submit.disabled = true;
    }
    const needed = Number(view.needed ?? item.needed ?? 1);
    if (needed > 1) {
      tally.textContent = tallyWords(
        Number(view.answers ?? item.answers ?? 0),
        Number(view.agreeing ?? item.agreeing ?? 0),
        needed,
        Boolean(view.disagreement ?? item.disagreement)
      );
    }
    submit.addEventListener('click', () => void this._send(item, form, needed));
    this._card.dataset.key = item.key;
  }

  dispose(): void {
    this._form?.dispose();
    super.dispose();
  }

  private async _read(item: IPromptItem): Promise<{ [key: string]: unknown }> {
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
        response.status === 404
          ? 'this prompt is no longer open for you'
          : `the prompt could not be read (HTTP ${response.status})`
      );
    }
    const body = (await response.json()) as {
      prompt?: { [key: string]: unknown };
    };
    if (!body.prompt) {
      throw new Error('the server sent no prompt');
    }
    return body.prompt;
  }

  private async _send(
    item: IPromptItem,
    form: IRenderedForm,
    needed: number
  ): Promise<void> {
    const read = form.value();
    if (!read.ok) {
      form.showErrors(read.problems);
      this._say('invalid', 'Some fields cannot be read: nothing was sent.');
      return;
    }
    form.clearErrors();
    const submit = this._submit;
    if (submit) {
      submit.disabled = true;
    }
    const host = this._who().hub ? HUB : SERVER;
    this._say('sending', `Sending the answer through ${host}…`);
    const url = URLExt.join(
      this._settings.baseUrl,
      Routes.prompts,
      encodeURIComponent(item.registration),
      encodeURIComponent(item.prompt_id),
      'answer'
    );
    let outcome: IOutcome;
    try {
      const response = await ServerConnection.makeRequest(
        url,
        {
          method: 'POST',
          body: JSON.stringify({ payload: read.value }),
          headers: { 'Content-Type': 'application/json' }
        },
        this._settings
      );
      let body: unknown = null;
      try {
        body = await response.json();
      } catch {
        body = null;
      }
      outcome = outcomeOf(
        response.status,
        body,
        this._who().name,
        needed,
        host
      );
    } catch (reason) {
      outcome = {
        status: 'failed',
        message: `${host} could not be reached (${String(reason)}); nothing was sent to the agent`,
        tally: '',
        again: true,
        validationErrors: []
      };
    }
    if (this._form !== form) {
      return;
    }
    this._say(outcome.status, outcome.message);
    if (this._tally && (outcome.tally || !outcome.again)) {
      // An outcome that ends the prompt without a count clears the count drawn
      // before it: "1 more needed" under "accepted" would no longer be true.
      this._tally.textContent = outcome.tally;
    }
    if (outcome.validationErrors.length) {
      const errors: IFieldError[] = outcome.validationErrors.map(e => ({
        pointer: pointer(e.path),
        message: e.message
      }));
      form.showErrors(errors);
    }
    if (submit) {
      submit.disabled = !outcome.again;
    }
    if (!outcome.again) {
      for (const input of form.element.querySelectorAll(
        'input,select,textarea,button'
      )) {
        (input as HTMLInputElement).disabled = true;
      }
    }
  }

  private _say(state: string, words: string): void {
    if (this._status) {
      this._status.textContent = words;
      this._status.dataset.status = state;
    }
  }

  private _settings: ServerConnection.ISettings;
  private _who: () => { name: string; hub: boolean };
  private _card: HTMLElement;
  private _item: IPromptItem | null = null;
  private _form: IRenderedForm | null = null;
  private _status: HTMLElement | null = null;
  private _tally: HTMLElement | null = null;
  private _submit: HTMLButtonElement | null = null;
  private _serial = 0;
}

export namespace AnswerCard {
  export interface IOptions {
    serverSettings: ServerConnection.ISettings;
    /** Who the server takes the page's user for, and whether the hub relays answers. */
    who: () => { name: string; hub: boolean };
  }
}
