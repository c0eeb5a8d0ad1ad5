/**
 * A virtual list: rows of one height, and only the rows in view (and a few around them)
 * in the DOM, so 10,000 prompts scroll as lightly as 10.
 */
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

/** Draws one row; `row` is the element to fill (kept while the row stays in view). */
export type RowRenderer<T> = (item: T, row: HTMLElement) => void;

/** The rows drawn beyond what is in view, above and below. */
const OVERSCAN = 4;

export class VirtualList<T extends { key: string }> extends Widget {
  constructor(options: VirtualList.IOptions<T>) {
    super();
    this.addClass('hitl-lab-list');
    this.node.setAttribute('role', 'list');
    this._rowHeight = options.rowHeight;
    this._render = options.render;
    this._spacer = document.createElement('div');
    this._spacer.className = 'hitl-lab-list-spacer';
    this.node.appendChild(this._spacer);
    this.node.addEventListener('scroll', this._onScroll, { passive: true });
  }

  /** The height of every row, in pixels. */
  get rowHeight(): number {
    return this._rowHeight;
  }

  /** The items listed. */
  get items(): ReadonlyArray<T> {
    return this._items;
  }

  /** The rows in the DOM now, by key. */
  get drawn(): ReadonlyMap<string, HTMLElement> {
    return this._rows;
  }

  /** List ``items``: a row whose item is the same object is kept as it is. */
  setItems(items: ReadonlyArray<T>): void {
    this._items = items;
    this._spacer.style.height = `${items.length * this._rowHeight}px`;
    this._draw();
  }

  /** Scroll so that the row of ``key`` is in view. */
  scrollToKey(key: string): void {
    const index = this._items.findIndex(item => item.key === key);
    if (index >= 0) {
      this.node.scrollTop = Math.max(
        0,
        index * this._rowHeight - this._rowHeight
      );
      this._draw();
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._draw();
  }

  protected onResize(msg: Widget.ResizeMessage): void {
    super.onResize(msg);
    this._draw();
  }

  private _onScroll = (): void => {
    if (!this._frame) {
      this._frame = requestAnimationFrame(() => {
        this._frame = 0;
        this._draw();
      });
    }
  };

  private _draw(): void {
    const height = this.node.clientHeight || this._rowHeight * 10;
    const top = this.node.scrollTop;
    const first = Math.max(0, Math.floor(top / this._rowHeight) - OVERSCAN);
    const last = Math.min(
      this._items.length,
      Math.ceil((top + height) / this._rowHeight) + OVERSCAN
    );
    const keep = new Map<string, HTMLElement>();
    for (let i = first; i < last; i++) {
      const item = this._items[i];
      let row = this._rows.get(item.key);
      if (row === undefined) {
        row = document.createElement('div');
        row.className = 'hitl-lab-row';
        row.setAttribute('role', 'listitem');
        this.node.appendChild(row);
      }
      if (this._shown.get(row) !== item) {
        row.replaceChildren();
        this._render(item, row);
        this._shown.set(row, item);
      }
      row.style.top = `${i * this._rowHeight}px`;
      row.style.height = `${this._rowHeight}px`;
      row.dataset.key = item.key;
      keep.set(item.key, row);
    }
    for (const [key, row] of this._rows) {
      if (!keep.has(key)) {
        row.remove();
      }
    }
    this._rows = keep;
  }

  private _items: ReadonlyArray<T> = [];
  private _rows = new Map<string, HTMLElement>();
  private _shown = new WeakMap<HTMLElement, T>();
  private _rowHeight: number;
  private _render: RowRenderer<T>;
  private _spacer: HTMLElement;
  private _frame = 0;
}

export namespace VirtualList {
  export interface IOptions<T> {
    rowHeight: number;
    render: RowRenderer<T>;
  }
}
