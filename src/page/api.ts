/**
 * The gateway's REST API as the page calls it (`hitl_nb/gateway/_api.py`), with the
 * page's own login (its cookie) and the XSRF token on every request: a POST needs it on
 * both hosts, and on a hub a `fetch` or an `EventSource` GET needs it too (JupyterHub
 * believes a service's login cookie without the token only on a plain page view; the
 * feed carries it as `?_xsrf=`, as JupyterHub's own spawn page does for its progress
 * events, since an `EventSource` cannot send a header). A reply is data
 * (`IReply`); what could not be read at all is an `ApiFailure` whose `kind` says why in
 * a way the page can act on: the network, a login that ended, a database away.
 */
import { IPageConfig } from './config';

/** What came back: the HTTP status and the JSON body (an object, or {}). */
export interface IReply {
  status: number;
  body: Record<string, unknown>;
}

/** Why a read failed: `network` (nothing came back), `logged-out` (401), `unavailable`
 * (503: the gateway's database), `http` (another status: `status`, `message`). */
export type FailureKind = 'network' | 'logged-out' | 'unavailable' | 'http';

export class ApiFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status = 0
  ) {
    super(message);
  }
}

/** The server's words of an error body ({"message": ...}), else "". */
export function messageOf(body: Record<string, unknown>): string {
  const message = body.message;
  return typeof message === 'string' ? message : '';
}

/** A failure for a reply that is not a success (`reply.status` >= 400). */
export function failureOf(reply: IReply, host: string): ApiFailure {
  const said = messageOf(reply.body);
  if (reply.status === 401) {
    return new ApiFailure(
      'logged-out',
      `You are not logged in to ${host} any more.`,
      401
    );
  }
  if (reply.status === 503) {
    return new ApiFailure(
      'unavailable',
      said || `${host} cannot answer now; try again in a moment.`,
      503
    );
  }
  return new ApiFailure(
    'http',
    said || `${host} answered ${reply.status}.`,
    reply.status
  );
}

export class Api {
  constructor(
    private readonly _config: IPageConfig,
    private readonly _fetch: typeof fetch = (input, init) =>
      window.fetch(input, init)
  ) {}

  /** The URL of `path` under the API root. */
  url(path: string): string {
    return this._config.api + path;
  }

  /** The feed's URL (the XSRF token in its query: see the module comment). */
  feedUrl(): string {
    return `${this.url('feed')}?_xsrf=${encodeURIComponent(this._config.xsrf)}`;
  }

  /** GET `path`; a reply of any status (`ApiFailure` only when nothing came back). */
  async get(path: string): Promise<IReply & { date: number | null }> {
    const response = await this._send(path, {
      method: 'GET',
      credentials: 'same-origin',
      headers: { Accept: 'application/json', 'X-XSRFToken': this._config.xsrf }
    });
    const date = Date.parse(response.headers.get('Date') ?? '');
    return {
      ...(await this._read(response)),
      date: Number.isNaN(date) ? null : date
    };
  }

  /** GET `path`, whose reply must be a success (else `ApiFailure`). */
  async read(path: string): Promise<IReply & { date: number | null }> {
    const reply = await this.get(path);
    if (reply.status >= 400) {
      throw failureOf(reply, this._config.host);
    }
    return reply;
  }

  /** POST `body` as JSON to `path`, with the XSRF token; a reply of any status. */
  async post(path: string, body: unknown): Promise<IReply> {
    const response = await this._send(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        Accept: 'application/json',
        'Content-Type': 'application/json',
        'X-XSRFToken': this._config.xsrf
      },
      body: JSON.stringify(body)
    });
    return this._read(response);
  }

  private async _send(path: string, init: RequestInit): Promise<Response> {
    try {
      return await this._fetch(this.url(path), init);
    } catch {
      throw new ApiFailure(
        'network',
        `${this._config.host} cannot be reached: check the connection; the page tries again.`
      );
    }
  }

  private async _read(response: Response): Promise<IReply> {
    let body: unknown = {};
    try {
      body = await response.json();
    } catch {
      body = {};
    }
    const record =
      typeof body === 'object' && body !== null && !Array.isArray(body)
        ? (body as Record<string, unknown>)
        : {};
    return { status: response.status, body: record };
  }
}
