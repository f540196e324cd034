/**
 * explain through the built binary accepts only what it can review (Pods, workload manifests, Lists, AdmissionReviews;
 * several files, folders, standard input) and exits 2 naming what it found otherwise; test finds podmutation-test.yml.
 */
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPodmutation } from '../support/cli.ts';
import { EXAMPLES, fixturePath, fixtureText } from '../support/fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'podmutation-explain-accepts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const POD = (JSON.parse(REVIEW) as { request: { object: Record<string, unknown> } }).request.object;
const VALUES = 'replicaCount: 2\nimage:\n  repository: nginx\n  tag: "1.27"\n';

/** A file of the scratch space holding `text`. */
function file(name: string, text: string): string {
  const path = join(scratch, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const explain = (inputs: readonly string[], stdin?: string) =>
  runPodmutation(['explain', '--rules', EXAMPLES, ...inputs], stdin);

describe('explain of an input that holds nothing it can review', () => {
  it.each([
    ['a Helm values file', 'values.yaml', VALUES],
    ['an empty object', 'empty.json', '{}'],
  ])('exits 2 for %s, naming what it found', async (_case, name, text) => {
    const path = file(name, text);

    const run = await explain([path]);

    expect(run.stderr).toBe(
      `podmutation explain: ${path} holds no Pod, workload manifest, List or AdmissionReview to explain\n` +
        `  ${path}: document 1 has no kind and no spec.containers, so it is no Pod; skipped\n`,
    );
    expect(run.stdout).toBe('');
    expect(run.code).toBe(2);
  });

  it('exits 2 for a bare JSON array, with a hint about a List', async () => {
    const path = file('bare.json', JSON.stringify([POD]));

    const run = await explain([path]);

    expect(run.stderr).toContain(
      `${path}: document 1 is a bare list; put the objects in the items of a List (apiVersion: v1, kind: List, items: [...]); skipped`,
    );
    expect(run.code).toBe(2);
  });
});

describe('explain of several inputs', () => {
  it('explains the Pods of several files, in order', async () => {
    const first = file('several/review.json', REVIEW);
    const second = file('several/pods.json', fixtureText('pods/pod-list.json'));

    const run = await explain([first, second, '-o', 'json']);
    const { pods } = JSON.parse(run.stdout) as { pods: { source: string }[] };

    expect(pods.map(({ source }) => source.split(': ')[0])).toEqual([
      first,
      ...Array.from({ length: pods.length - 1 }, () => second),
    ]);
    expect(pods.length).toBeGreaterThan(2);
    expect(run.code).toBe(0);
  });

  it("explains a folder's files and skips a values file beside them with a note", async () => {
    const folder = join(scratch, 'folder');
    file('folder/manifests/pod.json', JSON.stringify({ ...POD, metadata: { name: 'web', namespace: 'production' } }));
    file('folder/values.yaml', VALUES);
    file('folder/.hidden/pod.json', JSON.stringify(POD));

    const run = await explain([folder]);

    expect(run.stdout).toContain('Pod production/web (workload Pod web)');
    expect(run.stdout.match(/^Pod /gm)).toHaveLength(1);
    expect(run.stderr).toBe(
      `${join(folder, 'values.yaml')}: document 1 has no kind and no spec.containers, so it is no Pod; skipped\n`,
    );
    expect(run.code).toBe(0);
  });

  it('reads standard input for -', async () => {
    const run = await explain(['-'], REVIEW);

    expect(run.stdout).toContain('    migrate-legacy-pool\n');
    expect(run.code).toBe(0);
  });

  it('prints -o json and -o yaml as one document of every Pod', async () => {
    const path = fixturePath('pods/pod-list.json');

    const json = await explain([path, '-o', 'json']);
    const yaml = await explain([path, '-o', 'yaml']);

    const { parse } = await import('yaml');
    expect(parse(yaml.stdout)).toEqual(JSON.parse(json.stdout));
    expect(json.stdout).toBe(`${JSON.stringify(JSON.parse(json.stdout), null, 2)}\n`);
  });
});

describe('test of a folder whose test file is podmutation-test.yml', () => {
  it('finds and runs it as it runs podmutation-test.yaml', async () => {
    // The example's folders as they sit in examples/, so that its relative rules path holds.
    const examples = join(scratch, 'yml-examples');
    cpSync(join(EXAMPLES, '..'), examples, { recursive: true });
    const folder = join(examples, 'tests/migrate-legacy-pool');
    renameSync(join(folder, 'podmutation-test.yaml'), join(folder, 'podmutation-test.yml'));

    const run = await runPodmutation(['test', folder]);

    expect(run.stdout).toMatch(/PASS/);
    expect(run.stdout).not.toMatch(/FAIL/);
    expect(run.code).toBe(0);
  });
});
