/**
 * The page's config, as the server wrote it into the shell: the JSON of
 * `<script id="hitl-page-config" type="application/json">`. Read once, checked member by
 * member: a config that is not what the server writes stops the page with words that say
 * what is wrong, never a page that half works.
 */

/** The id of the element that holds the config. */
export const CONFIG_ID = 'hitl-page-config';

/** A prompt's id or a registration's, as the gateway's routes take them. */
const SEGMENT = /^[A-Za-z0-9_.:-]{1,256}$/;

/** Which prompt the page shows (the list when null). */
export interface IPromptRef {
  registration: string;
  prompt_id: string;
}

/** What the server tells the page. */
export interface IPageConfig {
  /** The gateway API's base path, ending in "/" (e.g. "/services/hitl/api/"). */
  api: string;
  /** The answer page's own base path, ending in "/". */
  page: string;
  /** The token sent as X-XSRFToken with every POST. */
  xsrf: string;
  /** Who the server says is here. */
  me: { name: string | null; display: string };
  prompt: IPromptRef | null;
  /** Where to open the prompt in JupyterLab, or null. */
  lab: string | null;
  /** Who serves the page, in words: "the hub" or "the Jupyter server". */
  host: string;
}

/** The config is missing or not what the server writes (the message says what). */
export class ConfigError extends Error {}

function record(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A path of this site ("/..."), never another site's or a script's. */
function sitePath(value: unknown, name: string): string {
  if (
    typeof value !== 'string' ||
    !value.startsWith('/') ||
    value.startsWith('//') ||
    value.includes('\\') ||
    Array.from(value).some(c => c.trim() === '' || c.charCodeAt(0) < 32)
  ) {
    throw new ConfigError(`${name} must be a path of this site, like "/hitl/"`);
  }
  return value.endsWith('/') ? value : `${value}/`;
}

/** A link that opens in this browser: a path of this site or an http(s) URL. */
function link(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') {
    return null;
  }
  if (value.startsWith('/') && !value.startsWith('//')) {
    return value;
  }
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:'
      ? url.href
      : null;
  } catch {
    return null;
  }
}

function text(value: unknown, name: string, max: number): string {
  if (typeof value !== 'string' || value.length > max) {
    throw new ConfigError(`${name} must be text of at most ${max} characters`);
  }
  return value;
}

/** Read the config from its JSON text (see the module comment). */
export function parseConfig(raw: string | null | undefined): IPageConfig {
  if (!raw) {
    throw new ConfigError(
      `the page has no settings (no #${CONFIG_ID} element): reload it from its link`
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError('the page settings are not JSON: reload the page');
  }
  if (!record(value)) {
    throw new ConfigError('the page settings must be a JSON object');
  }
  const me = record(value.me) ? value.me : {};
  const name =
    me.name === null || me.name === undefined
      ? null
      : text(me.name, 'me.name', 256);
  const display =
    typeof me.display === 'string' && me.display
      ? text(me.display, 'me.display', 256)
      : (name ?? 'you');
  let prompt: IPromptRef | null = null;
  if (value.prompt !== null && value.prompt !== undefined) {
    const ref = value.prompt;
    if (
      !record(ref) ||
      typeof ref.registration !== 'string' ||
      typeof ref.prompt_id !== 'string' ||
      !SEGMENT.test(ref.registration) ||
      !SEGMENT.test(ref.prompt_id)
    ) {
      throw new ConfigError(
        'the link names no prompt the gateway could have: check the link, or open the list'
      );
    }
    prompt = { registration: ref.registration, prompt_id: ref.prompt_id };
  }
  const page = sitePath(value.page, 'page');
  const host =
    value.host === 'hub' ||
    (value.host === undefined && page.includes('/services/'))
      ? 'the hub'
      : 'the Jupyter server';
  return {
    api: sitePath(value.api, 'api'),
    page,
    xsrf: value.xsrf === undefined ? '' : text(value.xsrf, 'xsrf', 4096),
    me: { name, display },
    prompt,
    lab: link(value.lab),
    host
  };
}

/** The config of `doc`'s shell. */
export function readConfig(doc: Document): IPageConfig {
  return parseConfig(doc.getElementById(CONFIG_ID)?.textContent);
}

/** The page's path of one prompt. */
export function promptPath(config: IPageConfig, ref: IPromptRef): string {
  return `${config.page}prompt/${encodeURIComponent(ref.registration)}/${encodeURIComponent(ref.prompt_id)}`;
}
