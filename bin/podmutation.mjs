#!/usr/bin/env node
// The podmutation CLI: runs the TypeScript sources through tsx, so the CLI and the Lambda share one code path.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../lib/cli/index.ts');
process.exitCode = await runCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
