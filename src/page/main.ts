/**
 * The answer page's entry (bundled into `hitl_nb/gateway/static/answer.js` by
 * `jlpm build:page`): read the config the server wrote into the shell, then show the
 * list (`prompt` null) or one prompt with its form (`renderForm` of `src/form`). No
 * framework, no JupyterLab: plain DOM, so a phone opens it in a moment. A config that
 * cannot be read is said on the page, never a blank page.
 */
import { renderForm } from '../form';
import { Api } from './api';
import { Clock } from './clock';
import { readConfig } from './config';
import { el } from './dom';
import { ListPage } from './listpage';
import { PromptPage } from './promptpage';
import { Shell } from './shell';

/** The element the shell gives the page. */
export const ROOT_ID = 'hitl-answer';

function start(): void {
  const root = document.getElementById(ROOT_ID) ?? document.body;
  let config;
  try {
    config = readConfig(document);
  } catch (reason) {
    const main = el('main', 'hitl-page-main');
    const alert = el(
      'p',
      'hitl-page-error',
      String((reason as Error).message ?? reason)
    );
    alert.setAttribute('role', 'alert');
    main.append(el('h1', 'hitl-page-title', 'This page cannot open'), alert);
    root.classList.add('hitl-page');
    root.replaceChildren(main);
    return;
  }
  const shell = new Shell(root, config);
  const api = new Api(config);
  const clock = new Clock();
  clock.start(root);
  const page =
    config.prompt === null
      ? new ListPage(shell, api, clock)
      : new PromptPage(shell, api, clock, config.prompt, renderForm);
  window.addEventListener('pagehide', () => page.stop());
  void page.start();
}

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', start);
} else {
  start();
}
