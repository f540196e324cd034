#!/usr/bin/env node
// The podmutation CLI: loads the prebuilt bundle (dist/cli, built by `npm ci` or `npm run build:cli` from bin/main.ts).
// Plain JavaScript that any Node.js runs, so that an older one is told which it needs before the bundle fails on it.
import { existsSync, readFileSync } from 'node:fs';

// The Node.js the CLI needs is package.json's engines.node (">=22": JSON.parse source text access, for exact integers).
const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const needed = Number(/^>=\s*(\d+)/.exec(engines.node)?.[1]);
const found = process.versions.node;
const bundle = new URL('../dist/cli/main.mjs', import.meta.url);
if (Number(found.split('.')[0]) < needed) {
  process.stderr.write(
    `podmutation: needs Node.js ${needed} or later (package.json engines.node "${engines.node}"), but runs on Node.js ${found} (${process.execPath}); ` +
      `install Node.js ${needed}, or run it with the project's own: npm run podmutation -- ARGS\n`,
  );
  process.exitCode = 2;
} else if (existsSync(bundle)) {
  await import(bundle.href);
} else {
  process.stderr.write(
    'podmutation: the CLI is not built (dist/cli/main.mjs is missing); run `npm run build:cli` (or `npm ci`) in the project first\n',
  );
  process.exitCode = 2;
}
