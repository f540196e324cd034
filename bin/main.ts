// The CLI's entry: what scripts/build-cli.ts bundles into dist/cli/ and bin/podmutation.mjs loads; run it from source with
// `npx tsx bin/main.ts <command>` while developing.
import { runCli } from '../lib/cli/index.ts';

process.exitCode = await runCli(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
