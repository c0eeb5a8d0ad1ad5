/**
 * The prompts panel (a sidebar): every open prompt this user may answer, soonest deadline
 * first, each row with its question as plain text (S-1), the agent, who may answer (and
 * a consensus' count), a deadline countdown and where its card is when a notebook open
 * here shows it; "Answer" draws the prompt's form in the panel (`answer.ts`: the browser's
 * form, no kernel; or, with the `answerWithKernel` setting, the notebook's card drawn by a
 * kernel of the panel's own, `card.ts`), "Show card"
 * opens the notebook at the card's cell, "Read all" shows a long question whole.
 *
 * The list is virtual (`list.ts`): 10,000 prompts cost the rows in view. The countdowns
 * tick once a second, for the rows in view, while the panel is shown.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { ServerConnection } from '@jupyterlab/services';
import { LabIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

import { AnswerCard } from './answer';
import type { CardHost } from './card';
import { VirtualList } from './list';
import { CardPlaces } from './places';
import { IPromptItem, IPrompts, IPromptsChange } from './tokens';
import { agentName, cut, prompts, timeLeft, whoMayAnswer } from './words';

/** The height of a row, in pixels (three lines and the buttons). */
export const ROW_HEIGHT = 112;
/** A question longer than this, or on several lines, offers "Read all". */
const SHORT_QUESTION = 140;

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

function button(
  label: string,
  className: string,
  onClick: () => void
): HTMLButtonElement {
  const node = el('button', `jp-Button hitl-lab-button ${className}`, label);
  node.type = 'button';
  node.addEventListener('click', event => {
    event.stopPropagation();
    onClick();
  });
  return node;
}

export class PromptsPanel extends Panel {
  constructor(options: PromptsPanel.IOptions) {
    super();
    this._model = options.model;
    this._places = options.places;
    this._loadHost = options.loadHost;
    this._useKernel = options.answerWithKernel ?? (() => false);
    this._serverSettings = options.serverSettings;
    this._who = options.who;
    this.id = 'hitl-nb-prompts';
    this.addClass('hitl-lab-panel');
    this.title.icon = options.icon;
    this.title.caption = 'Prompts for you';
    // JupyterLab's sidebars show icons (the caption on hover); Notebook 7's side panel
    // shows the label in its header.
    this.title.label = options.label ?? '';

    this._header = new Widget({ node: el('div', 'hitl-lab-header') });
    this._heading = el('div', 'hitl-lab-heading', 'Prompts for you');
    this._summary = el('div', 'hitl-lab-summary');
    this._banner = el('div', 'hitl-lab-banner');
    this._header.node.append(this._heading, this._summary, this._banner);
    this._empty = el(
      'div',
      'hitl-lab-empty',
      'No open prompts for you. When an agent asks, from any notebook of this server, ' +
        'its prompt appears here.'
    );
    this._header.node.appendChild(this._empty);
    this.addWidget(this._header);

    this._list = new VirtualList<IPromptItem>({
      rowHeight: ROW_HEIGHT,
      render: (item, row) => this._renderRow(item, row)
    });
    this.addWidget(this._list);

    this._cardView = new Panel();
    this._cardView.addClass('hitl-lab-answer');
    const bar = new Widget({ node: el('div', 'hitl-lab-answer-bar') });
    this._back = button('← All prompts', 'hitl-lab-back', () =>
      this.showList()
    );
    this._answering = el('div', 'hitl-lab-answering');
    this._answering.dir = 'auto';
    this._cardNote = el('div', 'hitl-lab-card-note');
    bar.node.append(this._back, this._answering, this._cardNote);
    this._cardView.addWidget(bar);
    this._cardView.hide();
    this.addWidget(this._cardView);

    this._model.changed.connect(this._onChanged, this);
    this._update({ added: [], removed: [], reset: true, initial: false });
  }

  /** The card host, once the first card was asked for. */
  get host(): CardHost | null {
    return this._host;
  }

  /** The key of the prompt whose card is shown (null: the list is shown). */
  get answering(): string | null {
    return this._answeringKey;
  }

  /** Show the list (again). */
  showList(): void {
    this._answeringKey = null;
    this._cardView.hide();
    this._list.show();
    this._header.show();
  }

  /** Draw the card of the prompt with ``key`` in the panel. */
  async answer(key: string): Promise<void> {
    const item = this._model.get(key);
    if (!item) {
      this._cardNote.textContent = 'This prompt is no longer open.';
      return;
    }
    this._answeringKey = key;
    this._answering.textContent = cut(item.prompt, 160);
    this._cardNote.textContent = '';
    this._header.hide();
    this._list.hide();
    this._cardView.show();
    if (!this._useKernel()) {
      await this._answerInPage(key, item);
      return;
    }
    this._formCard?.hide();
    const started = this._host === null || this._host.kernel === null;
    if (started) {
      this._cardNote.textContent = 'Starting the kernel that draws the card…';
    }
    try {
      const host = await this._ensureHost();
      host.widget.show();
      await host.show(item);
      if (this._answeringKey === key) {
        // The card says the question now (whole), and what became of an answer.
        this._answering.textContent = '';
        this._cardNote.textContent = '';
      }
    } catch (reason) {
      this._cardNote.textContent = `The card could not be drawn: ${String(reason)}`;
    }
  }

  /** Draw the prompt's form in the page (no kernel). */
  private async _answerInPage(key: string, item: IPromptItem): Promise<void> {
    this._host?.widget.hide();
    if (!this._formCard) {
      this._formCard = new AnswerCard({
        serverSettings: this._serverSettings,
        who: this._who
      });
      this._cardView.addWidget(this._formCard);
    }
    this._formCard.show();
    this._cardNote.textContent = 'Reading the prompt…';
    try {
      await this._formCard.open(item);
      if (this._answeringKey === key) {
        this._answering.textContent = '';
        this._cardNote.textContent = '';
      }
    } catch (reason) {
      this._cardNote.textContent = `The form could not be drawn: ${String(reason)}`;
    }
  }

  /** The form drawn in the page, once one was asked for. */
  get formCard(): AnswerCard | null {
    return this._formCard;
  }

  /** Scroll the list to the prompt with ``key``. */
  reveal(key: string): void {
    this.showList();
    this._list.scrollToKey(key);
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._tick();
    window.clearInterval(this._ticker);
    this._ticker = window.setInterval(() => this._tick(), 1000);
  }

  protected onBeforeHide(msg: Message): void {
    super.onBeforeHide(msg);
    window.clearInterval(this._ticker);
  }

  dispose(): void {
    window.clearInterval(this._ticker);
    this._host?.dispose();
    this._formCard?.dispose();
    super.dispose();
  }

  private async _ensureHost(): Promise<CardHost> {
    if (!this._host) {
      this._host = await this._loadHost();
      this._cardView.addWidget(this._host.widget);
    }
    return this._host;
  }

  private _onChanged(_: IPrompts, change: IPromptsChange): void {
    this._update(change);
  }

  private _update(change: IPromptsChange): void {
    const model = this._model;
    const items = model.items;
    this._list.setItems(items);
    const mine = items.filter(item => model.isForMe(item)).length;
    // Lab keeps its own entries in the tab's dataset (data-id, the label): kept.
    const { hitlcount: _, ...dataset } = this.title.dataset;
    this.title.dataset = mine
      ? { ...dataset, hitlcount: String(mine) }
      : dataset;
    this.title.caption = mine
      ? `Prompts for you: ${prompts(mine)}`
      : 'Prompts for you';
    let summary = items.length
      ? `${prompts(items.length)} open, soonest deadline first`
      : '';
    if (model.total > items.length) {
      summary = `${prompts(model.total)} open; the ${items.length.toLocaleString()} due soonest are listed`;
    }
    this._summary.textContent = summary;
    const status = model.status;
    this._banner.textContent =
      status.state === 'connecting'
        ? 'Looking for prompts…'
        : status.state === 'unavailable'
          ? `The prompts cannot be read now: ${status.message}. Trying again by itself.`
          : status.state === 'logged-out'
            ? status.message
            : '';
    this._banner.dataset.state = status.state;
    this._empty.style.display =
      items.length === 0 && status.state === 'ok' ? '' : 'none';
    if (this._answeringKey && change.removed.includes(this._answeringKey)) {
      this._cardNote.textContent =
        'This prompt is no longer waiting for an answer.';
    }
  }

  private _renderRow(item: IPromptItem, row: HTMLElement): void {
    const model = this._model;
    row.classList.toggle('hitl-lab-not-mine', !model.isForMe(item));
    const question = el('div', 'hitl-lab-question', item.prompt);
    question.dir = 'auto';
    const meta = el('div', 'hitl-lab-meta');
    meta.dir = 'auto';
    const agent = el('span', 'hitl-lab-agent', agentName(item.agent_url));
    agent.title = `${item.agent_url}, task ${item.task_id}`;
    meta.append(
      agent,
      document.createTextNode(' · '),
      el('span', 'hitl-lab-who', whoMayAnswer(item))
    );
    const where = this._places.label(item);
    if (where) {
      meta.append(
        document.createTextNode(' · '),
        el('span', 'hitl-lab-where', `card in ${where}`)
      );
    }
    const foot = el('div', 'hitl-lab-foot');
    const due = el('span', 'hitl-lab-due', this._dueText(item));
    foot.appendChild(due);
    const actions = el('span', 'hitl-lab-actions');
    const answer = button(
      'Answer',
      'hitl-lab-answer-button jp-mod-accept',
      () => {
        void this.answer(item.key);
      }
    );
    if (!item.may_answer) {
      answer.disabled = true;
      answer.title = `You cannot answer it here: ${item.why_not ?? ''}`;
      const why = el(
        'div',
        'hitl-lab-why',
        `You cannot answer it here: ${item.why_not ?? ''}`
      );
      why.title = why.textContent ?? '';
      why.dir = 'auto';
      meta.appendChild(why);
    }
    actions.appendChild(answer);
    if (where) {
      actions.appendChild(
        button('Show card', 'hitl-lab-show', () => void this._places.show(item))
      );
    }
    if (item.prompt_length > SHORT_QUESTION || item.prompt.includes('\n')) {
      actions.appendChild(
        button('Read all', 'hitl-lab-read', () => void this._readAll(item))
      );
    }
    foot.appendChild(actions);
    row.append(question, meta, foot);
  }

  private _dueText(item: IPromptItem): string {
    const due = this._model.dueAt(item);
    return due === null ? 'no deadline' : timeLeft(due, Date.now());
  }

  private _tick(): void {
    for (const [key, row] of this._list.drawn) {
      const item = this._model.get(key);
      const due = row.querySelector('.hitl-lab-due');
      if (item && due) {
        const text = this._dueText(item);
        if (due.textContent !== text) {
          due.textContent = text;
        }
      }
    }
  }

  private async _readAll(item: IPromptItem): Promise<void> {
    const body = el('div', 'hitl-lab-whole', item.prompt);
    body.dir = 'auto';
    const reading = this._model.wholeQuestion(item).then(
      text => {
        body.textContent = text;
      },
      reason => {
        body.textContent = `${item.prompt}\n\n(The rest could not be read: ${String(reason)}.)`;
      }
    );
    const dialog = showDialog({
      title: 'The whole question',
      body: new Widget({ node: body }),
      buttons: [Dialog.okButton({ label: 'Close' })]
    });
    await Promise.all([reading, dialog]);
  }

  private _model: IPrompts;
  private _places: CardPlaces;
  private _loadHost: () => Promise<CardHost>;
  private _useKernel: () => boolean;
  private _serverSettings: ServerConnection.ISettings;
  private _who: () => { name: string; hub: boolean };
  private _formCard: AnswerCard | null = null;
  private _host: CardHost | null = null;
  private _header: Widget;
  private _heading: HTMLElement;
  private _summary: HTMLElement;
  private _banner: HTMLElement;
  private _empty: HTMLElement;
  private _list: VirtualList<IPromptItem>;
  private _cardView: Panel;
  private _back: HTMLButtonElement;
  private _answering: HTMLElement;
  private _cardNote: HTMLElement;
  private _answeringKey: string | null = null;
  private _ticker = 0;
}

export namespace PromptsPanel {
  export interface IOptions {
    model: IPrompts;
    places: CardPlaces;
    icon: LabIcon;
    /** The tab's label (none in JupyterLab's sidebars: the icon, and the caption). */
    label?: string;
    /** The card host, loaded when the first card is asked for (`answerWithKernel`). */
    loadHost: () => Promise<CardHost>;
    /** Answer with the notebook's card drawn by a kernel (the setting; default: no). */
    answerWithKernel?: () => boolean;
    /** The page's connection to its server (its login: token and XSRF). */
    serverSettings: ServerConnection.ISettings;
    /** Who answers (as the server says) and whether the hub relays the answers. */
    who: () => { name: string; hub: boolean };
  }
}
