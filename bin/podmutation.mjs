#!/usr/bin/env node
// The podmutation CLI: loads the prebuilt bundle (dist/cli, built by `npm ci` or `npm run build:cli` from bin/main.ts).
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/cli/main.mjs', import.meta.url);
if (existsSync(bundle)) {
  await import(bundle.href);
} else {
  process.stderr.write('podmutation: the CLI is not built (dist/cli/main.mjs is missing); run `npm run build:cli` (or `npm ci`) in the project first\n');
  process.exitCode = 2;
}
