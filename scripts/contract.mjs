// Writes src/contract.ts from hitl_nb/schemas/lab.schema.json: the TypeScript types of
// what the server sends the page, and the routes, event id and URL parameters, so the
// page and the server cannot drift apart (`jlpm build:contract`). With `--check` it
// writes nothing and fails when src/contract.ts is not what the schema makes
// (tests/test_lab_contract.py runs that).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { compile } from 'json-schema-to-typescript';
import * as prettier from 'prettier';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCHEMA = 'hitl_nb/schemas/lab.schema.json';
const OUTPUT = 'src/contract.ts';

/** The schema as json-schema-to-typescript should read it: each definition named after
 * its key, and no other title (it would make a type of every titled member). */
function forTypes(schema) {
  const strip = node => {
    if (Array.isArray(node)) {
      return node.map(strip);
    }
    if (node === null || typeof node !== 'object') {
      return node;
    }
    if (typeof node.$ref === 'string') {
      return { $ref: node.$ref }; // a description beside it would make a type of its own
    }
    const out = {};
    for (const [key, value] of Object.entries(node)) {
      if (key !== 'title' && key !== '$id') {
        out[key] = strip(value);
      }
    }
    return out;
  };
  const defs = {};
  for (const [name, def] of Object.entries(schema.$defs)) {
    defs[name] = { ...strip(def), title: name };
  }
  // The root lists every definition, so that each becomes a type of its name.
  const properties = {};
  for (const name of Object.keys(defs)) {
    properties[name] = { $ref: `#/$defs/${name}` };
  }
  return {
    title: 'Contract',
    description: 'Every type of the contract, by name.',
    type: 'object',
    additionalProperties: false,
    properties,
    $defs: defs
  };
}

function literal(value) {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

async function generate() {
  const schema = JSON.parse(readFileSync(join(ROOT, SCHEMA), 'utf-8'));
  const types = await compile(forTypes(schema), 'Contract', {
    bannerComment: '',
    additionalProperties: false,
    strictIndexSignatures: true,
    format: false
  });
  const contract = schema['x-contract'];
  const lines = [
    '/**',
    ` * The contract with the server, generated from ${SCHEMA} by`,
    ' * `jlpm build:contract` (scripts/contract.mjs): do not edit. The server sends what',
    ' * these types say (tests/test_lab_contract.py checks its output against the schema).',
    ' */',
    '',
    "/** The id of the event the pages hear on the server's event bus (LabEvent). */",
    `export const EVENT_SCHEMA = ${literal(schema.$defs.LabEvent.$id)};`,
    '',
    "/** The routes the page reads, relative to the server's base URL. */",
    'export namespace Routes {',
    ...Object.entries(contract.routes).map(
      ([name, route]) => `  export const ${name} = ${literal(route)};`
    ),
    '}',
    '',
    "/** The page URL's parameters that open one prompt (or the panel). */",
    'export namespace UrlParameters {',
    ...Object.entries(contract.urlParameters).map(
      ([name, value]) => `  export const ${name} = ${literal(value)};`
    ),
    '}',
    '',
    types
  ];
  const options = await prettier.resolveConfig(join(ROOT, OUTPUT));
  return prettier.format(lines.join('\n'), {
    ...options,
    filepath: join(ROOT, OUTPUT)
  });
}

const text = await generate();
const target = join(ROOT, OUTPUT);
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf-8');
  } catch {
    // missing: not current
  }
  if (current !== text) {
    console.error(
      `${OUTPUT} is not what ${SCHEMA} makes: run \`jlpm build:contract\` and commit it`
    );
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
}
