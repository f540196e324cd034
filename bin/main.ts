// The CLI's entry: what scripts/build-cli.ts bundles into dist/cli/ and bin/podmutation.mjs loads; run it from source with
// `npx tsx bin/main.ts <command>` while developing.
import packageJson from '../package.json' with { type: 'json' };
import { runCli } from '../lib/cli/index.ts';

// A reader that stops early (`podmutation explain … | head -2`) closes the pipe: the command ends there, quietly and
// with exit 0, as kubectl and the coreutils do, never with an unhandled write EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
}

const streams = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
process.exitCode = await runCli(process.argv.slice(2), { streams, env: process.env, version: packageJson.version });
