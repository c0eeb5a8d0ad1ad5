/**
 * The answer page's config (`page/config.ts`): what the server writes is read as it is;
 * anything else, hostile or broken, stops the page with words, or is dropped (a link
 * that is not http(s) or this site's).
 */
import {
  ConfigError,
  parseConfig,
  promptPath,
  readConfig
} from '../page/config';

const GOOD = {
  api: '/services/hitl/api/',
  page: '/services/hitl/answer/',
  xsrf: 'token-1',
  me: { name: 'bob', display: 'Bob' },
  prompt: null,
  lab: null
};

function parse(
  changes: Record<string, unknown>
): ReturnType<typeof parseConfig> {
  return parseConfig(JSON.stringify({ ...GOOD, ...changes }));
}

describe('parseConfig', () => {
  it('reads what the server writes', () => {
    const config = parse({ prompt: { registration: 'r-1', prompt_id: 'p:1' } });
    expect(config).toEqual({
      api: '/services/hitl/api/',
      page: '/services/hitl/answer/',
      xsrf: 'token-1',
      me: { name: 'bob', display: 'Bob' },
      prompt: { registration: 'r-1', prompt_id: 'p:1' },
      lab: null,
      host: 'the hub'
    });
    expect(promptPath(config, config.prompt!)).toBe(
      '/services/hitl/answer/prompt/r-1/p%3A1'
    );
  });

  it('tells a Jupyter server from a hub by the page path, or by host', () => {
    expect(parse({ api: '/hitl/api/', page: '/hitl/answer/' }).host).toBe(
      'the Jupyter server'
    );
    expect(parse({ page: '/hitl/answer/', host: 'hub' }).host).toBe('the hub');
  });

  it('adds the trailing slash a path needs', () => {
    expect(parse({ api: '/hitl/api' }).api).toBe('/hitl/api/');
  });

  it.each([
    ['another site', { api: '//evil.example/api/' }],
    ['a script', { api: 'javascript:alert(1)//' }],
    ['a full URL', { page: 'https://evil.example/' }],
    ['a backslash', { api: '/\\evil.example/' }],
    ['a newline', { api: '/hitl/\napi/' }],
    ['no api', { api: undefined }],
    [
      'a prompt id with a slash',
      { prompt: { registration: 'r', prompt_id: '../x' } }
    ],
    ['an empty registration', { prompt: { registration: '', prompt_id: 'p' } }],
    ['a prompt that is a string', { prompt: 'r/p' }],
    ['a name that is a number', { me: { name: 7 } }],
    ['a huge xsrf', { xsrf: 'x'.repeat(5000) }]
  ])('refuses %s', (_, changes) => {
    expect(() => parse(changes)).toThrow(ConfigError);
  });

  it('refuses what is not a JSON object, in words', () => {
    expect(() => parseConfig('')).toThrow(/no settings/);
    expect(() => parseConfig('{nope')).toThrow(/not JSON/);
    expect(() => parseConfig('[1]')).toThrow(/JSON object/);
  });

  it('drops a JupyterLab link that does not open a page', () => {
    expect(parse({ lab: 'javascript:alert(1)' }).lab).toBeNull();
    expect(parse({ lab: 'data:text/html,<b>x</b>' }).lab).toBeNull();
    expect(parse({ lab: '//evil.example/lab' }).lab).toBeNull();
    expect(parse({ lab: '/user/bob/lab?hitl-prompt=p1' }).lab).toBe(
      '/user/bob/lab?hitl-prompt=p1'
    );
    expect(parse({ lab: 'https://hub.example/lab' }).lab).toBe(
      'https://hub.example/lab'
    );
  });

  it('keeps markup in a name as text, and names nobody when the server cannot', () => {
    const hostile = '<img src=x onerror=alert(1)>\u202e';
    expect(parse({ me: { name: null, display: hostile } }).me).toEqual({
      name: null,
      display: hostile
    });
    expect(parse({ me: undefined }).me).toEqual({ name: null, display: 'you' });
  });

  it('reads the shell element, escaped as the server writes it', () => {
    document.body.innerHTML =
      '<script id="hitl-page-config" type="application/json">' +
      JSON.stringify({ ...GOOD, me: { name: 'bob', display: '</script>' } })
        .replace(/</g, '\\u003c')
        .replace(/>/g, '\\u003e') +
      '</script>';
    expect(readConfig(document).me.display).toBe('</script>');
    document.body.innerHTML = '';
    expect(() => readConfig(document)).toThrow(ConfigError);
  });
});
