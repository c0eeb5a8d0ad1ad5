/**
 * The list of prompts: those this person may answer, soonest deadline first, each with
 * its question (cut, with "more"), a countdown, who may answer, a consensus' count and a
 * link to answer it; and, on demand, the others they can see. Rows are drawn a page at a
 * time (`PAGE`, "Show more"), so 1,000 open prompts cost the rows shown; a burst of feed
 * events is drawn once, at the next frame.
 */
import { PromptItem } from '../contract';
import { agentName, cut, prompts } from '../words';
import { Clock } from './clock';
import { IPageConfig, promptPath } from './config';
import { button, el, foreign } from './dom';
import { agreeCount, whoMayAnswer } from './words';

/** Rows drawn at first, and added by each "Show more". */
export const PAGE = 50;
/** The characters of a question a row shows before "more". */
export const SHORT = 160;

/** Is `item` for this person to answer now (the list's first section). */
export function isForMe(item: PromptItem): boolean {
  return item.state === 'open' && item.may_answer && !item.answered;
}

/** One row of the list (an `<li>`): exported for the tests. */
export function drawRow(
  item: PromptItem,
  config: IPageConfig,
  clock: Clock
): HTMLLIElement {
  const row = el('li', 'hitl-page-row');
  row.dataset.key = item.key;
  const href = promptPath(config, item);
  const question = foreign('p', 'hitl-page-question', '');
  const whole = item.prompt;
  const long = Array.from(whole).length > SHORT || whole.includes('\n');
  question.textContent = long ? cut(whole.split('\n')[0], SHORT) : whole;
  row.appendChild(question);
  if (long) {
    const more = button('more', 'hitl-page-more', () => {
      const open = more.getAttribute('aria-expanded') === 'true';
      question.textContent = open ? cut(whole.split('\n')[0], SHORT) : whole;
      question.classList.toggle('hitl-page-question-whole', !open);
      more.textContent = open ? 'more' : 'less';
      more.setAttribute('aria-expanded', String(!open));
    });
    more.setAttribute('aria-expanded', 'false');
    row.appendChild(more);
  }
  const facts = el('p', 'hitl-page-facts');
  facts.append(
    clock.countdown(item.deadline_at),
    el('span', 'hitl-page-who', whoMayAnswer(item))
  );
  const count = agreeCount(item);
  if (count) {
    facts.appendChild(el('span', 'hitl-page-count', count));
  }
  facts.appendChild(el('span', 'hitl-page-agent', agentName(item.agent_url)));
  row.appendChild(facts);
  if (!item.may_answer && item.why_not) {
    row.appendChild(foreign('p', 'hitl-page-why', item.why_not));
  } else if (item.answered) {
    row.appendChild(
      el('p', 'hitl-page-why', 'You answered: waiting for others to agree.')
    );
  }
  const go = el(
    'a',
    'hitl-page-button hitl-page-answer',
    isForMe(item) ? 'Answer' : 'Open'
  );
  go.href = href;
  // The link's name says which prompt (many rows have an "Answer").
  go.setAttribute(
    'aria-label',
    `${isForMe(item) ? 'Answer' : 'Open'}: ${cut(whole, 80)}`
  );
  row.appendChild(go);
  return row;
}

/** One section of the list: a heading, a count, the rows, "Show more". */
export class ListSection {
  constructor(
    readonly node: HTMLElement,
    private readonly _config: IPageConfig,
    private readonly _clock: Clock,
    private readonly _empty: string
  ) {
    this._summary = el('p', 'hitl-page-summary');
    this._list = el('ul', 'hitl-page-rows');
    this._more = button(`Show ${PAGE} more`, 'hitl-page-show-more', () => {
      this._shown += PAGE;
      this._draw();
    });
    this._more.hidden = true;
    node.append(this._summary, this._list, this._more);
  }

  /** The rows drawn now. */
  get drawn(): number {
    return this._list.childElementCount;
  }

  /** Show `items` (in their order; `total`: how many there are in all). */
  set(items: ReadonlyArray<PromptItem>, total: number): void {
    this._items = items;
    this._total = Math.max(total, items.length);
    this._draw();
  }

  private _draw(): void {
    const shown = this._items.slice(0, this._shown);
    const rows = new Map<string, HTMLElement>();
    for (const row of Array.from(this._list.children) as HTMLElement[]) {
      rows.set(row.dataset.key ?? '', row);
    }
    // A row whose item is the same object stays as it is (its "more" stays open).
    const next = shown.map(item => {
      const row = rows.get(item.key);
      if (row !== undefined && this._drawnFrom.get(row) === item) {
        return row;
      }
      const drawn = drawRow(item, this._config, this._clock);
      this._drawnFrom.set(drawn, item);
      return drawn;
    });
    this._list.replaceChildren(...next);
    const total = this._total;
    this._summary.textContent = total
      ? shown.length < total
        ? `${prompts(total)}; the ${shown.length.toLocaleString()} with the soonest deadlines are shown`
        : prompts(total)
      : this._empty;
    const left = this._items.length - shown.length;
    this._more.hidden = left <= 0;
    this._more.textContent = `Show ${Math.min(PAGE, left).toLocaleString()} more`;
  }

  private _items: ReadonlyArray<PromptItem> = [];
  private _total = 0;
  private _shown = PAGE;
  private _summary: HTMLElement;
  private _list: HTMLUListElement;
  private _more: HTMLButtonElement;
  private _drawnFrom = new WeakMap<HTMLElement, PromptItem>();
}
