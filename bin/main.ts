// The CLI's entry: what scripts/build-cli.ts bundles into dist/cli/ and bin/podmutation.mjs loads; run it from source with
// `npx tsx bin/main.ts <command>` while developing.
import packageJson from '../package.json' with { type: 'json' };
import { runCli } from '../lib/cli/index.ts';

const streams = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
process.exitCode = await runCli(process.argv.slice(2), { streams, env: process.env, version: packageJson.version });
