/**
 * What a rules path holds, as a newcomer's folders hold it: YAML errors with their position, a broken file among good
 * ones, documents of other kinds (a Kustomization, a chart's Deployment), and paths that hold no PodMutation at all.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES, fixturePath } from '../support/fixtures.ts';
import { runPodmutationInProcess } from '../support/cli.ts';

const REVIEW = fixturePath('reviews/deployment-legacy-pool.json');
const EXAMPLE_COUNT = readdirSync(EXAMPLES).filter((name) => name.endsWith('.yaml')).length;
const TABBED = 'apiVersion: agent.cloudpilot.ai/v1alpha1\nkind: PodMutation\nmetadata:\n\tname: tabbed\n';
const KUSTOMIZATION = 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [rules.yaml]\n';
const CHART_DEPLOYMENT = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: prefer-arm64-web\nspec: {}\n';

let scratch: string;
/** A folder of its own under the scratch folder, holding the example rules and `extra` files. */
function folderWith(name: string, extra: Readonly<Record<string, string>>, examples = true): string {
  const folder = join(scratch, name);
  mkdirSync(folder);
  if (examples) for (const file of readdirSync(EXAMPLES)) copyFileSync(join(EXAMPLES, file), join(folder, file));
  for (const [file, text] of Object.entries(extra)) writeFileSync(join(folder, file), text);
  return folder;
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'podmutation-rule-paths-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('a YAML error', () => {
  it('names the file, line and column', async () => {
    const folder = folderWith('tabbed', { 'tabbed.yaml': TABBED }, false);

    const run = await runPodmutationInProcess(['validate', join(folder, 'tabbed.yaml')]);

    expect(run.stderr).toBe(
      `podmutation validate: ${join(folder, 'tabbed.yaml')}:4:1: not valid JSON or YAML: Tabs are not allowed as indentation\n`,
    );
    expect(run.code).toBe(2);
  });
});

describe('validate of a folder with one broken file', () => {
  it('reports every other rule, then the broken file, and exits 2', async () => {
    const folder = folderWith('broken', { 'broken.yaml': TABBED });

    const run = await runPodmutationInProcess(['validate', folder]);

    expect(run.stdout).toContain(
      `valid    migrate-legacy-pool (${join(folder, 'migrate-legacy-pool.yaml')}; enabled, priority 100)`,
    );
    expect(run.stdout).toContain(`${EXAMPLE_COUNT} valid, 0 invalid, 1 file not read`);
    expect(run.stderr).toContain(`${join(folder, 'broken.yaml')}:4:1: not valid JSON or YAML`);
    expect(run.code).toBe(2);
  });

  it('lists the broken file in -o json', async () => {
    const folder = join(scratch, 'broken');

    const run = await runPodmutationInProcess(['validate', folder, '-o', 'json']);
    const document = JSON.parse(run.stdout) as { valid: number; unreadable: { source: string; message: string }[] };

    expect(document.valid).toBe(EXAMPLE_COUNT);
    expect(document.unreadable).toEqual([
      {
        source: join(folder, 'broken.yaml'),
        message: expect.stringContaining('broken.yaml:4:1: not valid JSON or YAML') as unknown,
      },
    ]);
  });
});

describe('documents of other kinds in a rules path', () => {
  it.each([
    ['a Kustomization', 'kustomization.yaml', KUSTOMIZATION, 'Kustomization'],
    ["a chart's Deployment named like a rule", 'deployment.yaml', CHART_DEPLOYMENT, 'Deployment'],
  ])('skip %s with a note on stderr, and count no duplicate', async (_name, file, text, kind) => {
    const folder = folderWith(`other-${kind}`, { [file]: text });

    const run = await runPodmutationInProcess(['validate', folder]);

    expect(run.stderr).toBe(`${join(folder, file)}: kind ${kind}, not a PodMutation; skipped\n`);
    expect(run.stdout).toContain(`${EXAMPLE_COUNT} valid, 0 invalid`);
    expect(run.code).toBe(0);
  });

  it("read as a PodMutation when it is of the product's API group, so that a misspelt kind is invalid, not skipped", async () => {
    const folder = folderWith(
      'misspelt',
      {
        'misspelt.yaml':
          'apiVersion: agent.cloudpilot.ai/v1alpha1\nkind: PodMutaton\nmetadata:\n  name: misspelt\nspec: {}\n',
      },
      false,
    );

    const run = await runPodmutationInProcess(['validate', folder]);

    expect(run.stdout).toContain('invalid  misspelt');
    expect(run.stdout).toContain('kind');
    expect(run.code).toBe(1);
  });
});

describe('a rules path that holds no PodMutation', () => {
  const emptyMessage = (path: string, what: string) =>
    `rules path ${path} holds ${what}; check the path, or pass --allow-empty where no rules is what you mean`;

  it.each([
    ['validate', (path: string) => ['validate', path]],
    ['explain', (path: string) => ['explain', '--rules', path, REVIEW]],
    ['review', (path: string) => ['review', '--rules', path, REVIEW]],
    ['report', (path: string) => ['report', '--objects', fixturePath('pods/pod-list.json'), '--rules', path]],
  ])('makes %s exit 2, naming the path, and passes with --allow-empty', async (command, args) => {
    const folder = folderWith(`empty-${command}`, {}, false);

    const refused = await runPodmutationInProcess(args(folder));
    const allowed = await runPodmutationInProcess([...args(folder), '--allow-empty']);

    expect(refused.stderr).toContain(emptyMessage(folder, 'no .yaml, .yml or .json file'));
    expect(refused.code).toBe(2);
    expect(allowed.stderr).not.toContain('holds no');
    expect(allowed.code).not.toBe(2);
  });

  it('makes test exit 2 for a folder with no test file, and pass with --allow-empty', async () => {
    const folder = folderWith('no-tests', {}, false);

    const refused = await runPodmutationInProcess(['test', folder]);
    const allowed = await runPodmutationInProcess(['test', folder, '--allow-empty']);

    expect(refused.stderr).toContain(
      `no podmutation-test.yaml (or .yml) under ${folder}; check the path, or pass --allow-empty where no tests is what you mean`,
    );
    expect(refused.code).toBe(2);
    expect(allowed.code).toBe(0);
  });

  it('is named as such when its files hold other kinds only', async () => {
    const folder = folderWith('only-other-kinds', { 'kustomization.yaml': KUSTOMIZATION, 'empty.yaml': '' }, false);

    const run = await runPodmutationInProcess(['validate', folder]);

    expect(run.stderr).toContain(emptyMessage(folder, '2 files but no PodMutation or PodPlacement'));
    expect(run.code).toBe(2);
  });
});
