/**
 * `npm run build:cli` (and `npm ci`, through the prepare script): bundles the CLI (bin/main.ts) with esbuild into
 * dist/cli/, which bin/podmutation.mjs loads. Compiling TypeScript at every start through tsx cost about 0.8 s
 *; the bundle starts in a small multiple of `node -e 0` (`npm run bench` measures it).
 *
 * ESM with code splitting: what a command loads on use (the Kubernetes client, the AWS SDK, the embedded DynamoDB)
 * goes to chunks that `--version`, `validate` or `review` never read. Packages are bundled, so that a start reads a
 * few files instead of resolving hundreds in node_modules.
 */
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The folder bin/podmutation.mjs loads the CLI from, relative to the project root. */
export const CLI_OUTDIR = join('dist', 'cli');

/** The entry file of the bundle, in `outdir`. */
export const CLI_ENTRY = 'main.mjs';

/** Renames `next` to `target`, moving a `target` already there (even one a concurrent build just put) aside first. */
function swapIn(next: string, target: string, retired: string): void {
  for (let attempt = 1; ; attempt += 1) {
    rmSync(retired, { recursive: true, force: true });
    try {
      if (existsSync(target)) renameSync(target, retired);
      renameSync(next, target);
      rmSync(retired, { recursive: true, force: true });
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (attempt >= 5 || (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOENT')) throw error;
    }
  }
}

/**
 * Bundles the CLI into `outdir` (default dist/cli), replacing what was there; returns the entry file's path. The bundle
 * is written beside it and swapped in by renames, so a CLI started meanwhile (by a test run in the same tree) finds
 * the old bundle or the new one, never an empty folder.
 */
export async function buildCli(outdir: string = join(ROOT, CLI_OUTDIR)): Promise<string> {
  const scratch = `${outdir}.building-${process.pid}`;
  const retired = `${outdir}.old-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: { main: join(ROOT, 'bin', 'main.ts') },
    outdir: scratch,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    // Prefer the packages' ESM sources: they tree-shake.
    mainFields: ['module', 'main'],
    minify: true,
    // CommonJS packages inside an ESM bundle still call require() for Node's built-ins.
    banner: {
      js: "import { createRequire as __podmutationRequire } from 'node:module'; const require = __podmutationRequire(import.meta.url);",
    },
    // dynalite (serve's embedded DynamoDB) reads files of its own at run time; it is loaded from node_modules.
    external: ['dynalite'],
    legalComments: 'none',
    logLevel: 'warning',
  });
  writeFileSync(join(scratch, 'package.json'), '{ "type": "module" }\n');
  swapIn(scratch, outdir, retired);
  return join(outdir, CLI_ENTRY);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const entry = await buildCli();
  console.log(`built ${entry}`);
}
