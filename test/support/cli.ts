import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import packageJson from '../../package.json' with { type: 'json' };
import { runCli } from '../../lib/cli/index.ts';
import { runProcess, type ProcessRun } from './processes.ts';
import { type CliContext } from '../../lib/cli/command.ts';

/** The real `podmutation` bin, which loads the bundle test/global-setup.ts builds. */
export const BIN = fileURLToPath(new URL('../../bin/podmutation.mjs', import.meta.url));

/** What a CLI run printed and returned. */
export type CliRun = ProcessRun;

/** The package's version, which `podmutation --version` prints. */
export const PACKAGE_VERSION: string = packageJson.version;

/**
 * Runs the real `podmutation` binary, the prebuilt bundle test/global-setup.ts builds from the sources of this run, with
 * Node 22 (the test runner's own node). `env` is added to this process's environment.
 */
export function runPodmutation(
  args: readonly string[],
  stdin?: string,
  env: Readonly<Record<string, string>> = {},
): Promise<CliRun> {
  return runProcess(process.execPath, [BIN, ...args], {
    ...(stdin === undefined ? {} : { input: stdin }),
    env: { ...process.env, ...env },
  });
}

/** The context of an in-process run: these streams, an environment without colour settings, the package's version. */
export function cliContext(streams: CliContext['streams'], env: CliContext['env'] = {}): CliContext {
  return { streams, env, version: PACKAGE_VERSION };
}

/** Runs the CLI in this process, for cases that need no separate binary (a spawn costs about 0.1 s). */
export async function runPodmutationInProcess(
  args: readonly string[],
  env: CliContext['env'] = {},
): Promise<CliRun & { readonly code: number }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const code = await runCli(args, cliContext({ stdin: new PassThrough(), stdout, stderr }, env));
  return { code, stdout: out, stderr: err };
}
