/**
 * Help, version and usage errors come from the command definitions: every command and subcommand
 * answers --help with its usage, each flag and its default, an example and its exit codes; a misspelt flag is answered
 * with the closest valid one.
 */
import { PassThrough } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram, runCli } from '../../lib/cli/index.ts';
import { EXAMPLES } from '../support/fixtures.ts';
import { cliContext, PACKAGE_VERSION, runPodmutation, runPodmutationInProcess } from '../support/cli.ts';
import { allCommands } from '../../lib/cli/program.ts';

const program = createProgram(
  cliContext({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }),
);

/** Every command below the program, as the words that reach it: ['placement', 'set']. */
const COMMANDS: readonly (readonly string[])[] = allCommands(program)
  .slice(1)
  .map((command) => {
    const words: string[] = [];
    for (let current: Command | null = command; current !== null && current !== program; current = current.parent)
      words.unshift(current.name());
    return words;
  });

function commandOf(words: readonly string[]): Command {
  return words.reduce<Command>((parent, word) => parent.commands.find((child) => child.name() === word)!, program);
}

describe('--help', () => {
  it('covers every command of the CLI, subcommands included', () => {
    expect(COMMANDS.map((words) => words.join(' '))).toEqual([
      'review',
      'explain',
      'validate',
      'test',
      'report',
      'rollout',
      'serve',
      'sync',
      'webhook-config',
      'placement',
      'placement set',
      'placement get',
      'placement list',
      'placement delete',
      'placement export',
      'help',
      'version',
    ]);
  });

  it.each(COMMANDS.map((words) => [words.join(' '), words] as const))(
    'podmutation %s --help exits 0 with usage, every flag and its default',
    async (_, words) => {
      const run = await runPodmutationInProcess([...words, '--help']);

      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toContain(`Usage: podmutation ${words.join(' ')} `);
      const command = commandOf(words);
      // commander wraps help at 80 columns: compare with the whitespace folded.
      const text = run.stdout.replace(/\s+/g, ' ');
      for (const option of command.options) {
        expect(text).toContain(option.flags);
        const shown =
          option.defaultValueDescription ??
          (typeof option.defaultValue === 'string' || typeof option.defaultValue === 'number'
            ? String(option.defaultValue)
            : undefined);
        if (shown !== undefined) expect(text).toContain(`default: ${shown}`);
      }
    },
  );

  it.each(COMMANDS.map((words) => [words.join(' '), words] as const))(
    'podmutation %s --help shows an example and the exit codes',
    async (_, words) => {
      const run = await runPodmutationInProcess([...words, '-h']);

      expect(run.stdout).toMatch(new RegExp(`Examples:\\n {2}\\$ .*podmutation ${words.join(' ')}`));
      expect(run.stdout).toMatch(/Exit codes:\n {2}0 {2}\S.*\n(?: {2}1 {2}\S.*\n)? {2}2 {2}\S/);
    },
  );

  it('is what `podmutation help COMMAND` prints too', async () => {
    const viaHelp = await runPodmutationInProcess(['help', 'explain']);
    const viaFlag = await runPodmutationInProcess(['explain', '--help']);

    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
  });

  it("is the subcommand's with `podmutation help GROUP SUBCOMMAND`", async () => {
    const viaHelp = await runPodmutationInProcess(['help', 'placement', 'set']);
    const viaFlag = await runPodmutationInProcess(['placement', 'set', '--help']);

    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toContain('Usage: podmutation placement set ');
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
  });

  it('names the command `podmutation help` does not know, exiting 2', async () => {
    const run = await runPodmutationInProcess(['help', 'placement', 'unset']);

    expect(run).toMatchObject({
      code: 2,
      stdout: '',
      stderr:
        "podmutation help: no command 'podmutation placement unset'; run 'podmutation placement --help' for its commands\n",
    });
  });

  it('states the local server defaults serve uses', async () => {
    const { LOCAL_SERVER_DEFAULTS } = await import('../../lib/local-server/server.ts');
    const text = (await runPodmutationInProcess(['serve', '--help'])).stdout.replace(/\s+/g, ' ');

    expect(text).toContain(`--host <host> the address to listen on (default: ${LOCAL_SERVER_DEFAULTS.host})`);
    expect(text).toContain(
      `(default: ${LOCAL_SERVER_DEFAULTS.httpPort}, or ${LOCAL_SERVER_DEFAULTS.httpsPort} with TLS)`,
    );
    expect(text).toContain(`published rules (default: ${LOCAL_SERVER_DEFAULTS.refreshSeconds})`);
    expect(text).toContain(`published under (default: ${LOCAL_SERVER_DEFAULTS.clusterId})`);
  });
});

describe('--version', () => {
  it('prints the package version and exits 0, from the prebuilt binary', async () => {
    const run = await runPodmutation(['--version']);

    expect(run).toEqual({ code: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
  });

  it.each([['-V'], ['-v'], ['version']])('answers %s as --version', async (flag) => {
    expect(await runPodmutationInProcess([flag])).toMatchObject({ code: 0, stdout: `${PACKAGE_VERSION}\n` });
  });
});

describe('a misspelt flag', () => {
  it.each([
    ['review', ['--rule', 'x'], '--rule', '--rules'],
    ['explain', ['--rules', 'x', '--enforcment', 'audit'], '--enforcment', '--enforcement'],
    ['validate', ['x', '--ouput', 'json'], '--ouput', '--output'],
    ['test', ['examples/tests', '--junt', 'report.xml'], '--junt', '--junit'],
    ['report', ['--object', 'x'], '--object', '--objects'],
    ['serve', ['--tls-crt', 'x'], '--tls-crt', '--tls-cert'],
    ['sync', ['--kubeconfg', 'x'], '--kubeconfg', '--kubeconfig'],
    ['webhook-config', ['--timout', '5'], '--timout', '--timeout'],
    ['placement list', ['--stag', 'prod'], '--stag', '--stage'],
  ])('podmutation %s %j exits 2 naming %s and the closest valid flag', async (command, args, typed, closest) => {
    const run = await runPodmutationInProcess([...command.split(' '), ...args]);

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `podmutation ${command}: unknown option '${typed}'\n(Did you mean ${closest}?)\nRun 'podmutation ${command} --help' for usage.\n`,
    );
  });

  it('names a required flag only once no flag is unknown', async () => {
    const run = await runPodmutationInProcess(['review', '-']);

    expect(run).toMatchObject({
      code: 2,
      stderr: "podmutation review: required option '--rules <path>' not specified\n",
    });
  });
});

describe('errors', () => {
  it('name the command and the path, never with a stack trace', async () => {
    const run = await runPodmutationInProcess(['validate', '/dev/null/x']);

    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'podmutation validate: rules path /dev/null/x cannot be read: a part of the path is a file, not a folder (ENOTDIR)\n',
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it.each(['explain', 'review'])(
    '%s without INPUT at a terminal exits 2 instead of waiting for typing',
    async (command) => {
      const stdin = Object.assign(new PassThrough(), { isTTY: true });
      const stderr = new PassThrough();
      let text = '';
      stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));

      const code = await runCli(
        [command, '--rules', EXAMPLES],
        cliContext({ stdin, stdout: new PassThrough(), stderr }),
      );

      expect(code).toBe(2);
      expect(text).toBe(
        `podmutation ${command}: no INPUT given, and standard input is a terminal: give a file, or pipe the input in (- reads standard input)\n`,
      );
    },
  );
});
