/**
 * `npm run build:cli` (and `npm ci`, through the prepare script): bundles the CLI (bin/main.ts) with esbuild into
 * dist/cli/, which bin/podmutation.mjs loads. Compiling TypeScript at every start through tsx cost about 0.8 s
 * (issue #13); the bundle starts in a small multiple of `node -e 0` (`npm run bench` measures it).
 *
 * ESM with code splitting: what a command loads on use (the Kubernetes client, the AWS SDK, the embedded DynamoDB)
 * goes to chunks that `--version`, `validate` or `review` never read. Packages are bundled, so that a start reads a
 * few files instead of resolving hundreds in node_modules.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The folder bin/podmutation.mjs loads the CLI from, relative to the project root. */
export const CLI_OUTDIR = join('dist', 'cli');

/** The entry file of the bundle, in `outdir`. */
export const CLI_ENTRY = 'main.mjs';

/** Bundles the CLI into `outdir` (default dist/cli), replacing what was there; returns the entry file's path. */
export async function buildCli(outdir: string = join(ROOT, CLI_OUTDIR)): Promise<string> {
  rmSync(outdir, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: { main: join(ROOT, 'bin', 'main.ts') },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    // Prefer the packages' ESM sources: they tree-shake.
    mainFields: ['module', 'main'],
    minify: true,
    // The CLI validates rules; the CRD's descriptions and CEL text are for `npm run crd` only.
    define: { SCHEMA_DOCS: 'false' },
    // CommonJS packages inside an ESM bundle still call require() for Node's built-ins.
    banner: { js: "import { createRequire as __podmutationRequire } from 'node:module'; const require = __podmutationRequire(import.meta.url);" },
    // dynalite (serve's embedded DynamoDB) reads files of its own at run time; it is loaded from node_modules.
    external: ['dynalite'],
    legalComments: 'none',
    logLevel: 'warning',
  });
  writeFileSync(join(outdir, 'package.json'), '{ "type": "module" }\n');
  return join(outdir, CLI_ENTRY);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const entry = await buildCli();
  console.log(`built ${entry}`);
}
