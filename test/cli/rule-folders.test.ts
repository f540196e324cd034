/**
 * Rules paths as a repository holds them, run through the built binary: other files beside the rules (a Helm values
 * file, package.json, a workflow), hidden folders and node_modules, --exclude, standard input and duplicate names.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPodmutation } from '../support/cli.ts';
import { EXAMPLES } from '../support/fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'podmutation-rule-folders-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const EXAMPLE_RULE = readFileSync(join(EXAMPLES, 'migrate-legacy-pool.yaml'), 'utf8');
const EXAMPLE_COUNT = 4;
const WORKFLOW = 'name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: [{ run: npm test }]\n';
const BROKEN = 'spec: [unclosed';

/** A folder of its own holding the example rules and `extra` files (paths with / make their folders). */
function folderWith(name: string, extra: Readonly<Record<string, string>>, examples = true): string {
  const folder = join(scratch, name);
  mkdirSync(folder);
  if (examples) cpSync(EXAMPLES, folder, { recursive: true });
  for (const [file, text] of Object.entries(extra)) {
    mkdirSync(dirname(join(folder, file)), { recursive: true });
    writeFileSync(join(folder, file), text);
  }
  return folder;
}

describe('validate of a folder that holds other files beside its rules', () => {
  it('skips each document with no kind with a one-line note, and finds the rules valid', async () => {
    const folder = folderWith('other-files', {
      'values.yaml': 'replicaCount: 2\nimage: { repository: nginx }\n',
      'package.json': '{ "name": "rules", "version": "1.0.0" }',
      'ci/workflow.yml': WORKFLOW,
    });

    const run = await runPodmutation(['validate', folder]);

    expect(run.stderr.split('\n').filter(Boolean).sort()).toEqual([
      `${join(folder, 'ci/workflow.yml')}: no kind, not a PodMutation; skipped`,
      `${join(folder, 'package.json')}: no kind, not a PodMutation; skipped`,
      `${join(folder, 'values.yaml')}: no kind, not a PodMutation; skipped`,
    ]);
    expect(run.stdout).toContain(`${EXAMPLE_COUNT} valid, 0 invalid`);
    expect(run.code).toBe(0);
  });

  it('skips a PodMutation of another API group, naming its apiVersion', async () => {
    const folder = folderWith('other-group', {
      'other.yaml': EXAMPLE_RULE.replace('agent.cloudpilot.ai/v1alpha1', 'example.com/v1').replace(
        'name: migrate-legacy-pool',
        'name: other',
      ),
    });

    const run = await runPodmutation(['validate', folder]);

    expect(run.stderr).toBe(`${join(folder, 'other.yaml')}: apiVersion example.com/v1, not a PodMutation; skipped\n`);
    expect(run.code).toBe(0);
  });

  it('does not search hidden folders or node_modules', async () => {
    const folder = folderWith('hidden', {
      '.github/workflows/ci.yml': WORKFLOW,
      '.cache/broken.yaml': BROKEN,
      'node_modules/some-package/rule.yaml': EXAMPLE_RULE,
    });

    const run = await runPodmutation(['validate', folder]);

    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`${EXAMPLE_COUNT} valid, 0 invalid`);
    expect(run.code).toBe(0);
  });

  it('names a bare list as such, with the List that holds PodMutations', async () => {
    const folder = folderWith('bare-list', { 'rules.json': `[${JSON.stringify({ kind: 'PodMutation' })}]` }, false);

    const run = await runPodmutation(['validate', folder]);

    expect(run.stderr).toContain(
      `${join(folder, 'rules.json')}: a bare list; put PodMutations in the items of a document of kind List`,
    );
    expect(run.stderr).toContain('holds a file but no PodMutation');
    expect(run.code).toBe(2);
  });
});

describe('--exclude GLOB', () => {
  it.each([
    ['a folder by name', 'charts'],
    ['a folder by its path', 'deploy/charts'],
    ['files by a pattern', '**/*.tpl.yaml'],
  ])('leaves out %s', async (_case, glob) => {
    const folder = folderWith(`exclude-${glob.replace(/\W/g, '')}`, { 'deploy/charts/x.tpl.yaml': BROKEN });

    const without = await runPodmutation(['validate', folder]);
    const excluded = await runPodmutation(['validate', folder, '--exclude', glob]);

    expect(without.code).toBe(2);
    expect(excluded.stderr).toBe('');
    expect(excluded.stdout).toContain(`${EXAMPLE_COUNT} valid, 0 invalid`);
    expect(excluded.code).toBe(0);
  });
});

describe('validate -', () => {
  it('reads the rules from standard input', async () => {
    const run = await runPodmutation(['validate', '-'], EXAMPLE_RULE);

    expect(run.stdout).toContain('valid    migrate-legacy-pool (-; enabled, priority 100)');
    expect(run.stdout).toContain('1 valid, 0 invalid');
    expect(run.code).toBe(0);
  });
});

describe('validate of duplicate names', () => {
  it('finds both duplicates invalid and still validates every other rule, in -o json on stdout', async () => {
    const folder = folderWith('duplicates', { 'copy.yaml': EXAMPLE_RULE });

    const run = await runPodmutation(['validate', folder, '-o', 'json']);
    const document = JSON.parse(run.stdout) as {
      rules: { name: string; source: string; valid: boolean; issues?: { field: string; reason: string }[] }[];
      valid: number;
      invalid: number;
    };

    expect(document.valid).toBe(EXAMPLE_COUNT - 1);
    expect(document.invalid).toBe(2);
    expect(document.rules.filter((rule) => !rule.valid).map((rule) => [rule.source, rule.issues])).toEqual(
      ['copy.yaml', 'migrate-legacy-pool.yaml'].map((file) => [
        join(folder, file),
        [
          {
            field: 'metadata.name',
            reason: `is defined more than once (${join(folder, 'copy.yaml')}, ${join(folder, 'migrate-legacy-pool.yaml')}); rule names must be unique`,
          },
        ],
      ]),
    );
    expect(run.code).toBe(1);
  });
});

describe('serve --rules of a folder with no PodMutation', () => {
  it('exits 2 naming the path, before it serves', async () => {
    const folder = folderWith('serve-values', { 'values.yaml': 'replicaCount: 2\n' }, false);

    const run = await runPodmutation(['serve', '--rules', folder, '--port', '0']);

    expect(run.stderr).toContain(`rules path ${folder} holds a file but no PodMutation`);
    expect(run.stdout).not.toContain('webhook URL');
    expect(run.code).toBe(2);
  });
});
