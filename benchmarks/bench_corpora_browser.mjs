// The browser's form renderer (src/form/) on SchemaStore's samples, in node + jsdom.
//
// Run through benchmarks/bench_corpora_browser.py, which reads SchemaStore (JSON, YAML,
// TOML samples, as benchmarks/bench_corpora.py does), keeps the samples the gateway's
// validator accepts, and writes them as JSON lines: {"name", "schema", "samples": [...]}.
//
//   node benchmarks/bench_corpora_browser.mjs CASES.jsonl [--verbose]
//
// Each sample is drawn with renderForm(host, schema, {value}) and read back with
// value(): an exact round trip gives the same JSON (key order aside). Counted: exact,
// changed, unreadable (value() refused), whole-form JSON fallbacks, JSON fields, crashes.
import { createRequire } from 'module';
import * as fs from 'fs';
import * as path from 'path';
import * as os from 'os';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const ts = require(path.join(root, 'node_modules', 'typescript'));
const { JSDOM } = require(path.join(root, 'node_modules', 'jsdom'));

// The renderer as CommonJS in a scratch folder (its TypeScript, transpiled alone).
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'hitl-form-'));
for (const file of fs.readdirSync(path.join(root, 'src', 'form'))) {
  const source = fs.readFileSync(path.join(root, 'src', 'form', file), 'utf-8');
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 }
  }).outputText;
  fs.writeFileSync(path.join(out, file.replace(/\.ts$/, '.js')), js);
}
const dom = new JSDOM('<!doctype html><body></body>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
for (const name of ['HTMLElement', 'HTMLLabelElement', 'HTMLInputElement', 'Event', 'Node']) {
  globalThis[name] = dom.window[name];
}
const { renderForm } = require(path.join(out, 'index.js'));

function canonical(value) {
  return JSON.stringify(value, (_, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map(k => [k, v[k]]))
      : v
  );
}

const [file, ...flags] = process.argv.slice(2);
const verbose = flags.includes('--verbose');
const counts = {
  schemas: 0,
  samples: 0,
  exact: 0,
  changed: 0,
  unreadable: 0,
  crashes: 0,
  'whole form one JSON editor': 0,
  fields: 0,
  'JSON fields': 0
};
const notes = [];
const builds = [];
for (const line of fs.readFileSync(file, 'utf-8').split('\n')) {
  if (!line.trim()) continue;
  const { name, schema, samples } = JSON.parse(line);
  counts.schemas += 1;
  try {
    const host = document.createElement('div');
    const t0 = performance.now();
    const fresh = renderForm(host, schema);
    builds.push(performance.now() - t0);
    if (fresh.jsonFallback) {
      counts['whole form one JSON editor'] += 1;
      notes.push(`json editor ${name}`);
    }
    fresh.dispose();
  } catch (error) {
    counts.crashes += 1;
    notes.push(`CRASH ${name} (fresh form): ${error}`);
    continue;
  }
  samples.forEach((sample, i) => {
    counts.samples += 1;
    try {
      const host = document.createElement('div');
      const form = renderForm(host, schema, { value: sample });
      counts.fields += host.querySelectorAll('.hitl-f-field').length;
      counts['JSON fields'] += host.querySelectorAll('.hitl-f-json').length;
      const back = form.value();
      if (!back.ok) {
        counts.unreadable += 1;
        notes.push(`unreadable ${name}/${i}: ${JSON.stringify(back.problems[0])}`);
      } else if (canonical(back.value) === canonical(sample)) {
        counts.exact += 1;
      } else {
        counts.changed += 1;
        notes.push(`changed ${name}/${i}: ${canonical(back.value).slice(0, 160)}`);
      }
      form.dispose();
    } catch (error) {
      counts.crashes += 1;
      notes.push(`CRASH ${name}/${i}: ${error && error.stack ? error.stack.split('\n').slice(0, 2).join(' ') : error}`);
    }
  });
}
builds.sort((a, b) => a - b);
console.log("SchemaStore through the browser's form (node + jsdom)");
for (const [key, n] of Object.entries(counts)) console.log(`  ${key.padEnd(30)} ${n}`);
if (counts.samples) {
  console.log(`  exact round trips: ${((100 * counts.exact) / counts.samples).toFixed(2)} % of accepted samples`);
}
if (counts.fields) {
  console.log(`  JSON fields: ${((100 * counts['JSON fields']) / counts.fields).toFixed(2)} % of the fields drawn for the samples`);
}
if (builds.length) {
  console.log(`  fresh form build: median ${builds[Math.floor(builds.length / 2)].toFixed(1)} ms, worst ${builds[builds.length - 1].toFixed(0)} ms`);
}
for (const note of verbose ? notes : notes.slice(0, 40)) console.log('   ', note);
if (!verbose && notes.length > 40) console.log(`    ... and ${notes.length - 40} more (--verbose)`);
fs.rmSync(out, { recursive: true, force: true });
