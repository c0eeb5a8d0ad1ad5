// Builds the answer page (`jlpm build:page`): src/page/main.ts and what it imports
// (src/form, the order and words shared with JupyterLab's panel) bundled by esbuild into
// one script, hitl_nb/gateway/static/answer.js, and style/answer.css (with any CSS the
// script's modules import) into hitl_nb/gateway/static/answer.css. The gateway serves
// both under {page}static/. `--production`: minified, no source map. Prints each file's
// size and its gzip size (the page's target: JS and CSS together at most 150 KB gzip).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import * as esbuild from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'hitl_nb', 'gateway', 'static');
const production = process.argv.includes('--production');

const common = {
  absWorkingDir: ROOT,
  bundle: true,
  minify: true,
  write: false,
  logLevel: 'warning',
  legalComments: 'none'
};

const script = await esbuild.build({
  ...common,
  entryPoints: ['src/page/main.ts'],
  outfile: join(OUT, 'answer.js'),
  format: 'iife',
  target: ['es2020'],
  platform: 'browser',
  sourcemap: production ? false : 'inline',
  // The page must not carry JupyterLab (nor React): a module that imports it fails here.
  external: [],
  plugins: [
    {
      name: 'no-jupyterlab',
      setup(build) {
        build.onResolve(
          { filter: /^@(jupyterlab|lumino|jupyter-widgets)\/|^react/ },
          args => ({
            errors: [
              {
                text: `the answer page may not import ${args.path} (from ${args.importer})`
              }
            ]
          })
        );
      }
    }
  ]
});

const style = await esbuild.build({
  ...common,
  entryPoints: ['style/answer.css'],
  outfile: join(OUT, 'answer.css'),
  target: ['chrome100', 'firefox100', 'safari15']
});

mkdirSync(OUT, { recursive: true });
let js = '';
let css = '';
for (const file of script.outputFiles) {
  if (file.path.endsWith('.css')) {
    css += file.text; // CSS imported by the script's modules (the form's)
  } else {
    js += file.text;
  }
}
for (const file of style.outputFiles) {
  css = file.text + css;
}
const written = { 'answer.js': js, 'answer.css': css };
let total = 0;
for (const [name, text] of Object.entries(written)) {
  const path = join(OUT, name);
  writeFileSync(path, text);
  const zipped = gzipSync(Buffer.from(text), { level: 9 }).length;
  total += zipped;
  console.log(
    `${relative(ROOT, path)}: ${(text.length / 1024).toFixed(1)} KB, ` +
      `${(zipped / 1024).toFixed(1)} KB gzip`
  );
}
console.log(`the answer page: ${(total / 1024).toFixed(1)} KB gzip in all`);
