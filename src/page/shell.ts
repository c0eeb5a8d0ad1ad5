/**
 * The page's frame, the same for the list and for one prompt: a banner (the way back to
 * the list, who is logged in), the main landmark with its heading, a polite live region
 * for what changes (the live list's state, an answer's outcome) and an alert for what
 * went wrong, each said in words with what to do (log in again, try again).
 */
import { ApiFailure } from './api';
import { IPageConfig } from './config';
import { button, el, foreign } from './dom';

export class Shell {
  constructor(
    readonly root: HTMLElement,
    readonly config: IPageConfig
  ) {
    root.classList.add('hitl-page');
    root.replaceChildren();
    const banner = el('header', 'hitl-page-banner');
    const home = el('a', 'hitl-page-home', 'Prompts');
    home.href = config.page;
    const who = el('span', 'hitl-page-me', `Logged in as ${config.me.display}`);
    who.dir = 'auto';
    this._who = who;
    banner.append(home, who);
    this.main = el('main', 'hitl-page-main');
    this.main.id = 'hitl-page-main';
    this.heading = el('h1', 'hitl-page-title');
    this.live = el('p', 'hitl-page-live');
    this.live.setAttribute('role', 'status');
    this.alert = el('div', 'hitl-page-alert');
    this.alert.setAttribute('role', 'alert');
    this.body = el('div', 'hitl-page-body');
    this.main.append(this.heading, this.live, this.alert, this.body);
    root.append(banner, this.main);
  }

  readonly main: HTMLElement;
  readonly heading: HTMLHeadingElement;
  /** Polite news: the live list's state. */
  readonly live: HTMLElement;
  /** What went wrong (empty when nothing did). */
  readonly alert: HTMLElement;
  /** The page's content. */
  readonly body: HTMLElement;

  /** Say that something went wrong, and what to do; `retry`: a "Try again" button. */
  fail(failure: ApiFailure | Error, retry?: () => void): void {
    const box = el('div', 'hitl-page-error');
    box.appendChild(foreign('p', 'hitl-page-error-text', failure.message));
    if (failure instanceof ApiFailure && failure.kind === 'logged-out') {
      const again = el('a', 'hitl-page-button', 'Log in again');
      // The page's own address: the host's login sends the browser back here.
      again.href = window.location.href;
      box.appendChild(again);
      this._who.textContent = 'Not logged in';
    } else if (retry) {
      box.appendChild(button('Try again', 'hitl-page-retry', retry));
    }
    this.alert.replaceChildren(box);
  }

  /** Nothing is wrong (any more). */
  clear(): void {
    if (this.alert.childElementCount) {
      this.alert.replaceChildren();
    }
  }

  private _who: HTMLElement;

  /** Polite news ("" to say nothing). */
  say(words: string): void {
    if (this.live.textContent !== words) {
      this.live.textContent = words;
    }
  }
}
