/**
 * The list page (`page/listpage.ts`) on jsdom: the REST read first, then the feed keeps
 * the rows (for me first; the others on demand); a feed that stops is diagnosed by the
 * REST API (logged out: said, with a link to log in again, and no list).
 */
import { Api } from '../page/api';
import { Clock } from '../page/clock';
import { parseConfig } from '../page/config';
import { FeedSource } from '../page/feed';
import { ListPage } from '../page/listpage';
import { Shell } from '../page/shell';
import { item } from './items';

const CONFIG = parseConfig(
  JSON.stringify({
    api: '/hitl/api/',
    page: '/hitl/answer/',
    xsrf: 'x',
    me: { name: 'bob', display: 'Bob' },
    prompt: null,
    lab: null
  })
);

function setup(status: number): {
  root: HTMLElement;
  page: ListPage;
  feed: () => FeedSource.IHandlers;
  urls: string[];
} {
  const root = document.createElement('div');
  const urls: string[] = [];
  const fetch = (url: RequestInfo | URL): Promise<Response> => {
    urls.push(
      typeof url === 'string'
        ? url
        : String(url instanceof URL ? url.href : url.url)
    );
    return Promise.resolve(
      new Response(JSON.stringify({ prompts: [], total: 0 }), { status })
    );
  };
  let handlers: FeedSource.IHandlers | null = null;
  const page = new ListPage(
    new Shell(root, CONFIG),
    new Api(CONFIG, fetch),
    new Clock(),
    h => {
      handlers = h;
      return {
        open: () => undefined,
        close: () => undefined
      } as unknown as FeedSource;
    }
  );
  return { root, page, feed: () => handlers!, urls };
}

function rows(root: HTMLElement): string[] {
  return Array.from(
    root.querySelectorAll('.hitl-page-row .hitl-page-question')
  ).map(q => q.textContent ?? '');
}

describe('the list page', () => {
  beforeAll(() => {
    window.requestAnimationFrame = (cb: FrameRequestCallback): number =>
      window.setTimeout(() => cb(0), 0);
  });

  it('reads the REST list, then follows the feed', async () => {
    const { root, page, feed, urls } = setup(200);
    await page.start();
    expect(urls[0]).toBe('/hitl/api/prompts?responder=me&limit=5000');
    expect(root.querySelector('.hitl-page-summary')?.textContent).toContain(
      'No open prompts'
    );
    const f = feed();
    f.event('reset', '{"total": 3}');
    f.event(
      'upsert',
      JSON.stringify({
        items: [
          item({ key: 'r/a', prompt: 'Later?', deadline_at: 2_000_000_000 }),
          item({ key: 'r/b', prompt: 'Sooner?', deadline_at: 1_900_000_000 }),
          item({
            key: 'r/c',
            prompt: 'Not mine',
            may_answer: false,
            why_not: 'only carol'
          })
        ]
      })
    );
    f.event('synced', '{"total": 3}');
    await new Promise(r => setTimeout(r, 5));
    expect(rows(root)).toEqual(['Sooner?', 'Later?']);
    f.event('remove', '{"keys": ["r/b"]}');
    await new Promise(r => setTimeout(r, 5));
    expect(rows(root)).toEqual(['Later?']);
    f.event('unavailable', '{"message": "the database is away"}');
    expect(root.querySelector('[role=status]')?.textContent).toContain(
      'the database is away'
    );
    page.stop();
  });

  it('says a login that ended, with no list under it', async () => {
    const { root, page } = setup(401);
    await page.start();
    expect(root.querySelector('[role=alert]')?.textContent).toContain(
      'not logged in'
    );
    expect(root.querySelector<HTMLElement>('.hitl-page-body')!.hidden).toBe(
      true
    );
    expect(root.querySelector('.hitl-page-me')?.textContent).toBe(
      'Not logged in'
    );
    page.stop();
  });
});
