/**
 * The answer page drawn (`page/list.ts`, `page/promptpage.ts`) on jsdom: 1,000 prompts
 * cost a page of rows; hostile text is text; one prompt's form submits exactly what was
 * entered with the XSRF token, puts a 422 on the fields, shows why a prompt takes no
 * answer (no form), and follows the feed to the final outcome. The form here is a test
 * double of `src/form`'s `renderForm` (the real one is tested in Chromium).
 */
import { PromptItem } from '../contract';
import { Api } from '../page/api';
import { Clock } from '../page/clock';
import { IPageConfig, parseConfig } from '../page/config';
import { FeedSource } from '../page/feed';
import { drawRow, ListSection, PAGE } from '../page/list';
import {
  IFormLike,
  IProblem,
  PromptPage,
  RenderForm
} from '../page/promptpage';
import { Shell } from '../page/shell';
import { item } from './items';

const HOSTILE =
  '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">' +
  '\u202eRTL\u202c zero\u200bwidth ' +
  'lorem ipsum '.repeat(850);

function config(prompt: IPageConfig['prompt'] = null): IPageConfig {
  return parseConfig(
    JSON.stringify({
      api: '/hitl/api/',
      page: '/hitl/answer/',
      xsrf: 'xsrf-1',
      me: { name: 'bob', display: 'Bob' },
      prompt,
      lab: '/lab?hitl-prompt=p1'
    })
  );
}

describe('the list', () => {
  it('draws a page of rows of 1,000 prompts, and more on demand', () => {
    const node = document.createElement('section');
    const section = new ListSection(node, config(), new Clock(), 'none');
    const many: PromptItem[] = Array.from({ length: 1000 }, (_, i) =>
      item({ key: `r/p${i}`, deadline_at: 1_900_000_000 + i })
    );
    section.set(many, 1000);
    expect(section.drawn).toBe(PAGE);
    expect(node.querySelector('.hitl-page-summary')?.textContent).toBe(
      `1,000 prompts; the ${PAGE} with the soonest deadlines are shown`
    );
    (node.querySelector('.hitl-page-show-more') as HTMLButtonElement).click();
    expect(section.drawn).toBe(2 * PAGE);
    // A change to one prompt redraws that row only.
    const before = node.querySelectorAll('li')[1];
    const changed = [...many];
    changed[0] = item({
      key: 'r/p0',
      deadline_at: 1_900_000_000,
      agreeing: 1,
      needed: 2
    });
    section.set(changed, 1000);
    expect(node.querySelectorAll('li')[1]).toBe(before);
    expect(node.querySelector('li .hitl-page-count')?.textContent).toBe(
      '1 of 2 agree'
    );
  });

  it('draws hostile text as text, cut with "more", in its own direction', () => {
    const row = drawRow(
      item({ key: 'r/p1', prompt: HOSTILE, specific: ['bob'], needed: 1 }),
      config(),
      new Clock()
    );
    expect(row.querySelector('script, img')).toBeNull();
    const question = row.querySelector('.hitl-page-question') as HTMLElement;
    expect(question.dir).toBe('auto');
    expect(question.textContent!.startsWith('<script>')).toBe(true);
    expect(Array.from(question.textContent!).length).toBe(160);
    const more = row.querySelector('.hitl-page-more') as HTMLButtonElement;
    more.click();
    expect(question.textContent).toBe(HOSTILE);
    expect(more.getAttribute('aria-expanded')).toBe('true');
    expect(row.querySelector('.hitl-page-who')?.textContent).toBe('bob');
    const link = row.querySelector('a.hitl-page-answer') as HTMLAnchorElement;
    expect(link.getAttribute('href')).toBe('/hitl/answer/prompt/r/p1');
    expect(
      link.getAttribute('aria-label')!.startsWith('Answer: <script>')
    ).toBe(true);
  });
});

/** A form double: `value()` gives what the test set; records errors shown. */
class FormDouble implements IFormLike {
  constructor(readonly element: HTMLElement) {}
  entered: ReturnType<IFormLike['value']> = {
    ok: true,
    value: { approve: true }
  };
  shown: IProblem[][] = [];
  disposed = false;
  value(): ReturnType<IFormLike['value']> {
    return this.entered;
  }
  showErrors(errors: IProblem[]): void {
    this.shown.push(errors);
  }
  clearErrors(): void {
    this.shown.push([]);
  }
  dispose(): void {
    this.disposed = true;
    this.element.remove();
  }
}

interface ICall {
  url: string;
  init: RequestInit;
}

function view(changes: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    registration: 'r1',
    agent_url: 'http://agent.example:8000',
    task_id: 't1',
    prompt_id: 'p1',
    prompt: HOSTILE,
    response_schema: { type: 'object' },
    deadline: '2030-01-01T00:00:00Z',
    deadline_passed: false,
    seconds_left: 252,
    allowed_responders: ['consensus:2'],
    policy: { specific: [], needed: 2 },
    state: 'open',
    may_answer: true,
    why_not: null,
    answers: 0,
    agreeing: 0,
    disagreement: false,
    your_answer: null,
    forwarded_for: null,
    two_person: false,
    ...changes
  };
}

class Harness {
  calls: ICall[] = [];
  views: Record<string, unknown>[] = [];
  post: { status: number; body: Record<string, unknown> } = {
    status: 200,
    body: {}
  };
  form: FormDouble | null = null;
  feed: FeedSource.IHandlers | null = null;
  opened = 0;
  root = document.createElement('div');

  fetch = (url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const href =
      typeof url === 'string' ? url : url instanceof URL ? url.href : url.url;
    this.calls.push({ url: href, init: init ?? {} });
    if (init?.method === 'POST') {
      return Promise.resolve(
        new Response(JSON.stringify(this.post.body), {
          status: this.post.status
        })
      );
    }
    const prompts = this.views.length > 1 ? this.views.shift()! : this.views[0];
    return Promise.resolve(
      new Response(JSON.stringify({ id: 'r1', prompts: [prompts] }), {
        status: 200,
        headers: { Date: new Date().toUTCString() }
      })
    );
  };

  render: RenderForm = host => {
    const node = document.createElement('div');
    node.className = 'form-double';
    host.appendChild(node);
    this.form = new FormDouble(node);
    return this.form;
  };

  page(): PromptPage {
    document.body.replaceChildren(this.root);
    const cfg = config({ registration: 'r1', prompt_id: 'p1' });
    const shell = new Shell(this.root, cfg);
    return new PromptPage(
      shell,
      new Api(cfg, this.fetch),
      new Clock(),
      cfg.prompt!,
      this.render,
      handlers => {
        this.feed = handlers;
        return {
          open: () => (this.opened += 1),
          close: () => undefined
        } as unknown as FeedSource;
      }
    );
  }

  text(selector: string): string {
    return this.root.querySelector(selector)?.textContent ?? '';
  }

  async submit(): Promise<void> {
    this.root
      .querySelector('form')!
      .dispatchEvent(new Event('submit', { cancelable: true }));
    await new Promise(r => setTimeout(r, 0));
    await new Promise(r => setTimeout(r, 0));
  }
}

describe('one prompt', () => {
  beforeEach(() => jest.useRealTimers());

  it('draws the question as text, the facts, the form; follows the feed', async () => {
    const h = new Harness();
    h.views = [view()];
    const page = h.page();
    await page.start();
    expect(h.calls[0].url).toBe('/hitl/api/tasks/r1/prompts');
    // A hub believes a fetch's login cookie only with the XSRF token, GETs too.
    expect(
      (h.calls[0].init.headers as Record<string, string>)['X-XSRFToken']
    ).toBe('xsrf-1');
    expect(new Api(config(), h.fetch).feedUrl()).toBe(
      '/hitl/api/feed?_xsrf=xsrf-1'
    );
    expect(h.root.querySelector('script, img')).toBeNull();
    expect(Array.from(h.text('#hitl-page-question')).length).toBe(600);
    const whole = h.root.querySelector('.hitl-page-more') as HTMLButtonElement;
    whole.click();
    expect(h.text('#hitl-page-question')).toBe(HOSTILE);
    expect(whole.getAttribute('aria-expanded')).toBe('true');
    expect(h.root.querySelector('main h1')?.textContent).toBe(
      'A prompt for you'
    );
    const facts = h.text('.hitl-page-details');
    expect(facts).toContain('Who may answer2 people must agree');
    expect(facts).toMatch(/Deadline4 min 1[0-2] s left/);
    expect(h.root.querySelector('.form-double')).not.toBeNull();
    expect(h.opened).toBe(1);
  });

  it('submits exactly what was entered, with the XSRF token; counts a consensus', async () => {
    const h = new Harness();
    h.views = [view()];
    const page = h.page();
    await page.start();
    h.post = {
      status: 202,
      body: {
        status: 'collecting',
        agreeing: 1,
        needed: 2,
        answers: 1,
        disagreement: false
      }
    };
    h.form!.entered = { ok: true, value: { approve: true, note: '' } };
    await h.submit();
    const post = h.calls.find(c => c.init.method === 'POST')!;
    expect(post.url).toBe('/hitl/api/tasks/r1/prompts/p1/answer');
    expect(JSON.parse(post.init.body as string)).toEqual({
      payload: { approve: true, note: '' }
    });
    expect((post.init.headers as Record<string, string>)['X-XSRFToken']).toBe(
      'xsrf-1'
    );
    const outcome = h.text('.hitl-page-outcome');
    expect(outcome).toContain(
      'held: the Jupyter server counted this answer from bob'
    );
    expect(outcome).toContain('Your answer is counted: 1 of 2 agree.');
    expect(h.root.querySelector('form')).toBeNull();
  });

  it('puts a 422 on the fields and keeps the form', async () => {
    const h = new Harness();
    h.views = [view()];
    await h.page().start();
    h.post = {
      status: 422,
      body: {
        message: "the answer does not fit the prompt's form; nothing was sent",
        validation_errors: [
          { path: '/approve', keyword: 'type', message: 'is not a boolean' }
        ]
      }
    };
    await h.submit();
    expect(h.form!.shown[h.form!.shown.length - 1]).toEqual([
      { pointer: '/approve', message: 'is not a boolean' }
    ]);
    expect(h.root.querySelector('form')).not.toBeNull();
    expect(h.text('.hitl-page-outcome')).toContain(
      'invalid: the answer does not fit'
    );
  });

  it('shows what the form refuses, and sends nothing', async () => {
    const h = new Harness();
    h.views = [view()];
    await h.page().start();
    h.form!.entered = {
      ok: false,
      problems: [{ pointer: '/approve', message: 'choose one' }]
    };
    await h.submit();
    expect(h.calls.some(c => c.init.method === 'POST')).toBe(false);
    expect(h.form!.shown[h.form!.shown.length - 1]).toEqual([
      { pointer: '/approve', message: 'choose one' }
    ]);
  });

  it('shows why not, and no form', async () => {
    const h = new Harness();
    h.views = [
      view({ may_answer: false, why_not: 'only carol may answer this prompt' })
    ];
    await h.page().start();
    expect(h.root.querySelector('form')).toBeNull();
    expect(h.text('.hitl-page-outcome')).toBe(
      'refused: only carol may answer this prompt; you cannot answer it here'
    );
  });

  it('reads the prompt again when the feed says it left, and shows the final outcome', async () => {
    jest.useFakeTimers({
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask']
    });
    const h = new Harness();
    h.views = [
      view(),
      view({
        state: 'forwarded',
        forwarded_for: ['alice', 'bob'],
        answers: 2,
        agreeing: 2
      })
    ];
    await h.page().start();
    h.feed!.event('reset', '{"total": 1}');
    h.feed!.event('upsert', JSON.stringify({ items: [{ key: 'r1/p1' }] }));
    h.feed!.event('synced', '{"total": 0}');
    await jest.advanceTimersByTimeAsync(400);
    jest.useRealTimers();
    await new Promise(r => setTimeout(r, 0));
    expect(h.root.querySelector('form')).toBeNull();
    expect(h.text('.hitl-page-outcome')).toBe(
      'accepted: the agent accepted the answer (2 people agreed: alice, bob)'
    );
    expect(h.text('.hitl-page-details')).toContain('Answered byalice, bob');
  });

  it('says a prompt that is not there, and links to the list', async () => {
    const h = new Harness();
    h.views = [view({ prompt_id: 'other' })];
    await h.page().start();
    expect(h.root.querySelector('h1')?.textContent).toBe('Prompt not found');
    expect(h.root.querySelector('a.hitl-page-link')?.getAttribute('href')).toBe(
      '/hitl/answer/'
    );
  });
});

describe('errors', () => {
  it('says a login that ended, with a link to log in again', async () => {
    const root = document.createElement('div');
    const cfg = config({ registration: 'r1', prompt_id: 'p1' });
    const fetch401 = (): Promise<Response> =>
      Promise.resolve(new Response('{"error": 401}', { status: 401 }));
    const page = new PromptPage(
      new Shell(root, cfg),
      new Api(cfg, fetch401),
      new Clock(),
      cfg.prompt!,
      () => {
        throw new Error('no form for a page logged out');
      },
      () =>
        ({
          open: () => undefined,
          close: () => undefined
        }) as unknown as FeedSource
    );
    await page.start();
    const alert = root.querySelector('[role=alert]')!;
    expect(alert.textContent).toContain(
      'You are not logged in to the Jupyter server any more.'
    );
    expect(alert.querySelector('a')?.textContent).toBe('Log in again');
  });

  it('says the network is down, with a way to try again', async () => {
    const root = document.createElement('div');
    const cfg = config({ registration: 'r1', prompt_id: 'p1' });
    const down = (): Promise<Response> =>
      Promise.reject(new TypeError('Failed to fetch'));
    const page = new PromptPage(
      new Shell(root, cfg),
      new Api(cfg, down),
      new Clock(),
      cfg.prompt!,
      () => {
        throw new Error('unused');
      },
      () =>
        ({
          open: () => undefined,
          close: () => undefined
        }) as unknown as FeedSource
    );
    await page.start();
    const alert = root.querySelector('[role=alert]')!;
    expect(alert.textContent).toContain('cannot be reached');
    expect(alert.querySelector('button')?.textContent).toBe('Try again');
  });
});
