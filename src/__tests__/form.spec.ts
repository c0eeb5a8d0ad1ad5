/**
 * The browser form, kind by kind: what each draws, what it sends, and that nothing is
 * added (defaults only on a fresh form), nothing dropped (a JSON editor instead), and
 * the schema's text drawn as text.
 */
import { IRenderedForm, renderForm } from '../form';

function draw(
  schema: unknown,
  value?: unknown
): { host: HTMLElement; form: IRenderedForm } {
  const host = document.createElement('div');
  document.body.append(host);
  const form = renderForm(host, schema, value === undefined ? {} : { value });
  return { host, form };
}

function type(input: Element, text: string): void {
  (input as HTMLInputElement).value = text;
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

function pick(input: Element): void {
  (input as HTMLInputElement).checked = true;
  input.dispatchEvent(new Event('change', { bubbles: true }));
}

function choose(select: Element, value: string): void {
  (select as HTMLSelectElement).value = value;
  select.dispatchEvent(new Event('change', { bubbles: true }));
}

const obj = (properties: object, required: string[] = []): object => ({
  type: 'object',
  properties,
  required
});

describe('renderForm', () => {
  it('labels by title or the name in words, every input labelled', () => {
    const { host } = draw(
      obj(
        { dueDate: { type: 'string' }, n: { type: 'integer', title: 'Count' } },
        ['n']
      )
    );
    const labels = Array.from(host.querySelectorAll('label.hitl-f-label')).map(
      l => l.textContent
    );
    expect(labels).toEqual(['Due date', 'Count *']);
    for (const input of host.querySelectorAll('input,select,textarea')) {
      expect(host.querySelector(`label[for="${input.id}"]`)).not.toBeNull();
    }
  });

  it('draws the schema text as text, never markup (S-1)', () => {
    const { host } = draw(
      obj({
        a: {
          type: 'string',
          title: '<img src=x onerror=alert(1)>',
          description: '<b>x</b>'
        }
      })
    );
    expect(host.querySelector('img')).toBeNull();
    expect(host.querySelector('b')).toBeNull();
    expect(host.textContent).toContain('<img src=x onerror=alert(1)>');
  });

  it('leaves an untouched optional text out and sends what is typed', () => {
    const { host, form } = draw(obj({ name: { type: 'string' } }));
    expect(form.value()).toEqual({ ok: true, value: {} });
    type(host.querySelector('input')!, 'Ada');
    expect(form.value()).toEqual({ ok: true, value: { name: 'Ada' } });
    type(host.querySelector('input')!, '');
    expect(form.value()).toEqual({ ok: true, value: {} });
  });

  it('keeps integers and numbers apart; unreadable numbers are problems on the field', () => {
    const { host, form } = draw(
      obj({ i: { type: 'integer' }, n: { type: 'number' } })
    );
    const [i, n] = Array.from(host.querySelectorAll('input'));
    type(i, '1.0');
    type(n, '2.5');
    expect(form.value()).toEqual({ ok: true, value: { i: 1, n: 2.5 } });
    type(i, '1.5');
    expect(form.value()).toEqual({
      ok: false,
      problems: [{ pointer: '/i', message: 'Enter a whole number' }]
    });
    type(i, '123456789012345678901');
    const big = form.value();
    expect(big.ok).toBe(false);
    type(i, '7');
    type(n, 'abc');
    expect(form.value()).toEqual({
      ok: false,
      problems: [{ pointer: '/n', message: 'Enter a number' }]
    });
  });

  it('a required boolean without default is an unset Yes/No, never a silent false', () => {
    const { host, form } = draw(
      obj({ approve: { type: 'boolean' } }, ['approve'])
    );
    const radios = host.querySelectorAll(
      '.hitl-field-approve input[type=radio]'
    );
    expect(radios.length).toBe(2);
    expect(form.value()).toEqual({ ok: true, value: {} });
    pick(radios[1]);
    expect(form.value()).toEqual({ ok: true, value: { approve: false } });
  });

  it('an optional boolean is a checkbox left out until touched', () => {
    const { host, form } = draw(obj({ ok: { type: 'boolean' } }));
    const box = host.querySelector('input[type=checkbox]') as HTMLInputElement;
    expect(form.value()).toEqual({ ok: true, value: {} });
    box.checked = false;
    box.dispatchEvent(new Event('change', { bubbles: true }));
    expect(form.value()).toEqual({ ok: true, value: { ok: false } });
  });

  it('an enum is a select with nothing chosen, its labels by hint, radios by hint', () => {
    const { host, form } = draw(
      obj({
        p: { enum: ['low', 2], 'x-ui-enumNames': ['Low', 'Two'] },
        r: { enum: ['a', 'b'], 'x-ui-widget': 'radio' }
      })
    );
    const select = host.querySelector('select')!;
    expect(Array.from(select.options).map(o => o.textContent)).toEqual([
      '—',
      'Low',
      'Two'
    ]);
    choose(select, '1');
    pick(host.querySelectorAll('.hitl-field-r input[type=radio]')[1]);
    expect(form.value()).toEqual({ ok: true, value: { p: 2, r: 'b' } });
  });

  it('proposes defaults on a fresh form, adds none to a given value', () => {
    const schema = obj({
      a: { type: 'string', default: 'd' },
      c: { const: 'k' }
    });
    expect(draw(schema).form.value()).toEqual({
      ok: true,
      value: { a: 'd', c: 'k' }
    });
    expect(draw(schema, {}).form.value()).toEqual({ ok: true, value: {} });
  });

  it('formats: a date picker, a date-time picker with its UTC offset', () => {
    const { host, form } = draw(
      obj({
        d: { type: 'string', format: 'date' },
        t: { type: 'string', format: 'date-time' }
      }),
      { t: '2026-12-01T09:30:00+05:45' }
    );
    expect(
      host.querySelector('.hitl-field-d input')!.getAttribute('type')
    ).toBe('date');
    const [local, zone] = Array.from(
      host.querySelectorAll<HTMLInputElement>('.hitl-field-t input')
    );
    expect(local.type).toBe('datetime-local');
    expect(zone.value).toBe('+05:45');
    type(local, '2026-12-01T10:00');
    expect(form.value()).toEqual({
      ok: true,
      value: { t: '2026-12-01T10:00:00+05:45' }
    });
  });

  it('an optional section is added and removed; a nested one is a fieldset with a legend', () => {
    const { host, form } = draw(
      obj({ owner: obj({ name: { type: 'string' } }, ['name']) })
    );
    const owner = host.querySelector('fieldset.hitl-field-owner')!;
    expect(owner.querySelector('legend')!.textContent).toBe('Owner');
    const add = Array.from(owner.querySelectorAll('button')).find(
      b => b.textContent === 'Add Owner'
    )!;
    add.click();
    expect(form.value()).toEqual({ ok: true, value: { owner: {} } });
    type(owner.querySelector('input')!, 'x');
    expect(form.value()).toEqual({ ok: true, value: { owner: { name: 'x' } } });
    Array.from(owner.querySelectorAll('button'))
      .find(b => b.textContent === 'Remove Owner')!
      .click();
    expect(form.value()).toEqual({ ok: true, value: {} });
  });

  it('a list: add, move up, remove; an empty entry is a problem, not a null', () => {
    const { host, form } = draw(
      obj({ tags: { type: 'array', items: { type: 'string' } } })
    );
    const add = host.querySelector(
      '.hitl-field-tags > .hitl-f-add'
    ) as HTMLButtonElement;
    add.click();
    add.click();
    expect(form.value()).toEqual({
      ok: false,
      problems: [
        { pointer: '/tags/0', message: 'Entry 1 is empty' },
        { pointer: '/tags/1', message: 'Entry 2 is empty' }
      ]
    });
    const inputs = host.querySelectorAll('.hitl-f-entry input');
    type(inputs[0], 'a');
    type(inputs[1], 'b');
    (host.querySelectorAll('.hitl-f-up')[1] as HTMLButtonElement).click();
    expect(form.value()).toEqual({ ok: true, value: { tags: ['b', 'a'] } });
    (
      host.querySelectorAll(
        '.hitl-f-entry .hitl-f-remove'
      )[0] as HTMLButtonElement
    ).click();
    expect(form.value()).toEqual({ ok: true, value: { tags: ['a'] } });
  });

  it('oneOf with a discriminator is a chooser; switching keeps what still fits', () => {
    const schema = obj({
      pet: {
        oneOf: [
          {
            title: 'Cat',
            type: 'object',
            properties: { kind: { const: 'cat' }, name: { type: 'string' } }
          },
          {
            title: 'Dog',
            type: 'object',
            properties: { kind: { const: 'dog' }, name: { type: 'string' } }
          }
        ]
      }
    });
    const { host, form } = draw(schema, { pet: { kind: 'cat', name: 'Tom' } });
    const select = host.querySelector(
      'select.hitl-f-variant'
    ) as HTMLSelectElement;
    expect(Array.from(select.options).map(o => o.textContent)).toEqual([
      '—',
      'Cat',
      'Dog'
    ]);
    expect(select.value).toBe('0');
    expect(form.value()).toEqual({
      ok: true,
      value: { pet: { kind: 'cat', name: 'Tom' } }
    });
  });

  it('what the fields cannot draw is a JSON editor with its own error; a value of another type too', () => {
    const { host, form } = draw(
      obj({ d: { $dynamicRef: '#x' }, s: { type: 'string' } }),
      { d: [1], s: 5 }
    );
    const areas = host.querySelectorAll('textarea.hitl-f-json');
    expect(areas.length).toBe(2);
    expect(form.value()).toEqual({ ok: true, value: { d: [1], s: 5 } });
    type(areas[0], '[1,');
    const read = form.value();
    expect(read.ok).toBe(false);
    expect(!read.ok && read.problems[0].pointer).toBe('/d');
    expect(form.jsonFallback).toBe(false);
    expect(draw({ $ref: 'https://example.org/x.json' }).form.jsonFallback).toBe(
      true
    );
  });

  it('shows errors on their fields, linked for screen readers, and lists them in words', () => {
    const { host, form } = draw(
      obj({
        owner: obj({ email: { type: 'string' } }),
        n: { type: 'integer' }
      }),
      {
        owner: { email: 'x' }
      }
    );
    form.showErrors([
      { pointer: '/owner/email', message: 'Not an email address' },
      { pointer: '', message: 'Something else' }
    ]);
    const input = host.querySelector(
      '.hitl-field-email input'
    ) as HTMLInputElement;
    expect(input.getAttribute('aria-invalid')).toBe('true');
    const error = document.getElementById(
      input.getAttribute('aria-describedby')!.split(' ').pop()!
    );
    expect(error!.textContent).toBe('Not an email address');
    const summary = host.querySelector('.hitl-f-summary')!;
    expect(summary.textContent).toContain(
      'Owner › Email: Not an email address'
    );
    expect(summary.textContent).toContain('The answer: Something else');
    type(input, 'y');
    expect(input.hasAttribute('aria-invalid')).toBe(false);
    form.clearErrors();
    expect((summary as HTMLElement).hidden).toBe(true);
  });

  it('tells of changes and goes away on dispose', () => {
    const { host, form } = draw(obj({ a: { type: 'string' } }));
    const seen: number[] = [];
    form.onChange(() => seen.push(1));
    type(host.querySelector('input')!, 'x');
    expect(seen.length).toBe(1);
    form.dispose();
    expect(host.children.length).toBe(0);
  });
});
