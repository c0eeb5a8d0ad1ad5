/**
 * The shared round-trip corpus (tests/forms/corpus/round_trip.json), held to the
 * browser's renderer: each value given comes back exactly (types included, nothing
 * added, nothing dropped). tests/forms/test_corpus.py holds the Python forms to it.
 */
import * as fs from 'fs';
import * as path from 'path';

import { renderForm } from '../form';

interface ICase {
  name: string;
  schema: unknown;
  values: unknown[];
}

const corpus = JSON.parse(
  fs.readFileSync(
    path.join(
      __dirname,
      '..',
      '..',
      'tests',
      'forms',
      'corpus',
      'round_trip.json'
    ),
    'utf-8'
  )
) as ICase[];

const params: Array<[string, unknown, unknown]> = [];
for (const c of corpus) {
  c.values.forEach((value, i) =>
    params.push([`${c.name}-${i}`, c.schema, value])
  );
}

describe('the shared round-trip corpus', () => {
  it.each(params)('%s comes back exactly', (_, schema, value) => {
    const host = document.createElement('div');
    document.body.append(host);
    const form = renderForm(host, schema, { value });
    const back = form.value();
    expect(back).toEqual({ ok: true, value });
    if (back.ok) {
      // the same JSON, byte for byte once keys are sorted (types kept)
      expect(canonical(back.value)).toBe(canonical(value));
    }
    form.dispose();
  });
});

function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map(k => [k, (v as Record<string, unknown>)[k]])
        )
      : v
  );
}
