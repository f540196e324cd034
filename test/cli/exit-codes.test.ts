/**
 * The exit codes each command's --help lists are the ones it returns: each command is run into each of its codes, and
 * the code it returned must be the one the case expects and one its help documents.
 */
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../lib/cli/index.ts';
import { commandDoc, commandPath } from '../../lib/cli/command.ts';
import { cliContext, runPodmutationInProcess } from '../support/cli.ts';
import { EXAMPLES, fixturePath } from '../support/fixtures.ts';
import { PassThrough } from 'node:stream';
import { allCommands } from '../../lib/cli/program.ts';

const REVIEW = fixturePath('reviews/deployment-legacy-pool.json');
const INVALID = fixturePath('rules/invalid');
const OBJECTS = fixturePath('report/cluster.json');

/** The exit codes each command documents, by its path (`podmutation placement set`). */
const DOCUMENTED = new Map(
  allCommands(
    createProgram(cliContext({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() })),
  ).flatMap((command) => {
    const doc = commandDoc(command);
    return doc === undefined ? [] : [[commandPath(command), Object.keys(doc.exits).map(Number)] as const];
  }),
);

const CASES: readonly (readonly [string, readonly string[], number])[] = [
  ['validate', ['validate', EXAMPLES], 0],
  ['validate', ['validate', INVALID], 1],
  ['validate', ['validate', '/nonexistent/rules'], 2],
  ['explain', ['explain', '--rules', EXAMPLES, REVIEW], 0],
  ['explain', ['explain', '--rules', INVALID, '--allow-empty', REVIEW], 1],
  ['explain', ['explain', '--rules', '/nonexistent/rules', REVIEW], 2],
  ['review', ['review', '--rules', EXAMPLES, REVIEW], 0],
  ['review', ['review', '--rules', INVALID, REVIEW], 1],
  ['review', ['review', '--rules', EXAMPLES, fixturePath('pods/pod-list.json')], 2],
  ['test', ['test', 'examples/tests'], 0],
  ['test', ['test', '/nonexistent/tests'], 2],
  ['report', ['report', '--objects', OBJECTS, '--rules', fixturePath('report/rules')], 1],
  ['report', ['report', '--objects', OBJECTS], 2],
  ['webhook-config', ['webhook-config', '--url', 'https://webhook.example.com', '--token', 'a'.repeat(43)], 0],
  ['webhook-config', ['webhook-config', '--url', 'http://webhook.example.com', '--token', 'a'.repeat(43)], 2],
  ['serve', ['serve'], 2],
  ['placement', ['placement'], 2],
  ['rollout', ['rollout', '--rules', EXAMPLES], 2],
  ['help', ['help', 'placement', 'set'], 0],
  ['help', ['help', 'placement', 'unset'], 2],
  ['version', ['version'], 0],
  ['version', ['version', '--short'], 2],
];

describe('the exit codes of each command', () => {
  it.each(CASES)('%s returns a code its help lists: %j exits %i', async (command, args, expected) => {
    const run = await runPodmutationInProcess(args);

    expect(run.code).toBe(expected);
    expect(DOCUMENTED.get(`podmutation ${command}`)).toContain(run.code);
  });

  it('covers every code every command documents', () => {
    const covered = new Set(CASES.map(([command, , code]) => `${command} ${code}`));
    // Codes reached only against a deployment or a cluster are covered by their own tests (sync, placement, serve 1).
    const elsewhere = new Set([
      'sync 0',
      'sync 1',
      'sync 2',
      'serve 0',
      'serve 1',
      'placement 0',
      'test 1',
      'rollout 0',
      'rollout 1',
      'report 0',
      'webhook-config 1',
    ]);
    const missing = [...DOCUMENTED].flatMap(([path, codes]) =>
      path.split(' ').length === 2
        ? codes
            .map((code) => `${path.slice('podmutation '.length)} ${code}`)
            .filter((key) => !covered.has(key) && !elsewhere.has(key))
        : [],
    );

    expect(missing).toEqual([]);
  });
});
