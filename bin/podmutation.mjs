#!/usr/bin/env node
// The podmutation CLI: loads the prebuilt bundle (dist/cli, built by `npm ci` or `npm run build:cli` from bin/main.ts).
// Plain JavaScript that any Node.js runs: on one older than the CLI needs, it runs itself again with the package's own
// Node.js (the `node` dependency), in the same folder and with the same arguments, or says which it needs.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The Node.js the CLI needs is package.json's engines.node (">=22": JSON.parse source text access, for exact integers).
const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const needed = Number(/^>=\s*(\d+)/.exec(engines.node)?.[1]);
const found = process.versions.node;
const bundle = new URL('../dist/cli/main.mjs', import.meta.url);

/** The package's own Node.js (node_modules/node, the npm package of the Node.js binary) when it is new enough. */
function ownNode() {
  try {
    const manifest = createRequire(import.meta.url).resolve('node/package.json');
    const { version, bin } = JSON.parse(readFileSync(manifest, 'utf8'));
    const path = join(dirname(manifest), typeof bin === 'string' ? bin : bin.node);
    return Number(version.split('.')[0]) >= needed && existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Runs this file again with `node`, passing signals on, and ends as it ends (its exit code, or its signal). */
function runWith(node) {
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const forward = (signal) => child.kill(signal);
  for (const signal of signals) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    for (const name of signals) process.off(name, forward);
    if (signal !== null) process.kill(process.pid, signal);
    else process.exitCode = code ?? 1;
  });
}

if (Number(found.split('.')[0]) < needed) {
  const node = ownNode();
  if (node !== undefined && node !== process.execPath) runWith(node);
  else {
    process.stderr.write(
      `podmutation: needs Node.js ${needed} or later (package.json engines.node "${engines.node}"), but runs on Node.js ${found} (${process.execPath}), ` +
        `and the package's own Node.js (its "node" dependency) is not installed; install Node.js ${needed}, or install podmutation again with npm\n`,
    );
    process.exitCode = 2;
  }
} else if (existsSync(bundle)) {
  await import(bundle.href);
} else {
  process.stderr.write(
    'podmutation: the CLI is not built (dist/cli/main.mjs is missing); run `npm run build:cli` (or `npm ci`) in the project first\n',
  );
  process.exitCode = 2;
}
