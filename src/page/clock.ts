/**
 * The countdowns: one timer for the page, ticking once a second, writing each deadline's
 * words (`timeLeft` of `src/words.ts`, as JupyterLab's panel says them) into the
 * elements drawn with `countdown()`. Deadlines are the server's times: `offset` is how
 * far the server's clock is ahead of this browser's (from a reply's Date header).
 */
import { timeLeft } from '../words';
import { el } from './dom';

export class Clock {
  /** The server's clock minus this browser's, in ms. */
  offset = 0;

  /** An element that counts down to `dueAt` (seconds since the epoch, server time). */
  countdown(dueAt: number | null, className = 'hitl-page-due'): HTMLElement {
    const node = el('span', className);
    if (dueAt === null) {
      node.textContent = 'no deadline';
      return node;
    }
    node.dataset.due = String(dueAt * 1000);
    this._write(node, Date.now());
    return node;
  }

  /** Start ticking (in `root`: the elements drawn there). */
  start(root: HTMLElement): void {
    this.stop();
    this._timer = window.setInterval(() => {
      const now = Date.now();
      for (const node of root.querySelectorAll<HTMLElement>('[data-due]')) {
        this._write(node, now);
      }
    }, 1000);
  }

  stop(): void {
    window.clearInterval(this._timer);
  }

  private _write(node: HTMLElement, now: number): void {
    const due = Number(node.dataset.due) - this.offset;
    const words = timeLeft(due, now);
    if (node.textContent !== words) {
      node.textContent = words;
    }
    node.classList.toggle('hitl-page-due-soon', due - now < 5 * 60_000);
  }

  private _timer = 0;
}
