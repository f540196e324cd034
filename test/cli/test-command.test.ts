/**
 * `podmutation test DIR`, the equivalent of `kyverno test` and `gator verify`: the examples' own
 * suite passes through the real binary; failing fixtures fail with their diff and exit 1; a test file that cannot be
 * run exits 2 naming its fields, and the other files still run; `--junit` writes a report CI systems read.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { TEST_FILE_NAME } from '../../lib/rule-tests/index.ts';
import { runPodmutation, runPodmutationInProcess } from '../support/cli.ts';
import { fixturePath } from '../support/fixtures.ts';
import { parseXml } from '../support/xml.ts';

const EXAMPLE_TESTS = fileURLToPath(new URL('../../examples/tests', import.meta.url));
const fixture = (name: string) => fixturePath(`rule-tests/${name}`);
const scratch = mkdtempSync(join(tmpdir(), 'podmutation-test-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The test files under a folder and the resources their results name, read from the files themselves. */
function suiteOf(folder: string): { readonly files: string[]; readonly resources: string[] } {
  const files = readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith(TEST_FILE_NAME) && statSync(join(folder, path)).isFile())
    .map((path) => join(folder, path));
  const resources = files.flatMap((file) =>
    (parse(readFileSync(file, 'utf8')) as { results: { resource: string }[] }).results.map((result) => result.resource),
  );
  return { files, resources };
}

describe('podmutation test examples/tests', () => {
  const suite = suiteOf(EXAMPLE_TESTS);

  it('passes every result of the examples through the prebuilt binary, and exits 0', async () => {
    const run = await runPodmutation(['test', EXAMPLE_TESTS]);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const verdicts = [...run.stdout.matchAll(/^ {2}(PASS|FAIL) {2}(\S+)$/gm)].map((match) => [match[1], match[2]]);
    expect(verdicts).toEqual(expect.arrayContaining(suite.resources.map((resource) => ['PASS', resource])));
    expect(verdicts).toHaveLength(suite.resources.length);
    expect(run.stdout).toContain(`\n${suite.resources.length} passed, 0 failed in ${suite.files.length} test files\n`);
  });

  it('covers a workload manifest, a Pod, an AdmissionReview, a List, a denial, an audited rule and placements', () => {
    const kinds = new Set(suite.resources.map((resource) => resource.split('/')[0]));
    const texts = suite.files.map((file) => readFileSync(file, 'utf8')).join('\n');

    expect([...kinds]).toEqual(
      expect.arrayContaining(['Deployment', 'StatefulSet', 'CronJob', 'Job', 'Rollout', 'Pod', 'AdmissionReview']),
    );
    expect(texts).toMatch(/^ {4}denied: /m);
    expect(texts).toMatch(/^ {4}audited: \[\S/m);
    expect(texts).toMatch(/^enforcement: audit$/m);
    expect(texts).toMatch(/^placements: /m);
    expect(texts).toMatch(/^ {4}patchedResource: /m);
    expect(readFileSync(join(EXAMPLE_TESTS, 'prefer-arm64-web/resources/pods.json'), 'utf8')).toContain(
      '"kind": "List"',
    );
  });

  it('writes a JUnit report of every result, none failed', async () => {
    const report = join(scratch, 'examples.xml');

    const run = await runPodmutationInProcess(['test', EXAMPLE_TESTS, '--junit', report]);

    expect(run.code).toBe(0);
    const root = parseXml(readFileSync(report, 'utf8'));
    expect(root.attributes).toMatchObject({ tests: String(suite.resources.length), failures: '0', errors: '0' });
    expect(root.children.map((testsuite) => testsuite.attributes.file)).toEqual(suite.files);
  });

  it("makes the JUnit report's folder when it does not exist yet (the help's own example)", async () => {
    const report = join(scratch, 'test-results', 'nested', 'podmutation.xml');

    const run = await runPodmutationInProcess(['test', EXAMPLE_TESTS, '--junit', report]);

    expect(run.code).toBe(0);
    expect(parseXml(readFileSync(report, 'utf8')).attributes).toMatchObject({ failures: '0' });
  });
});

describe('podmutation test on failing test files', () => {
  it.each([
    [
      'a wrong applied list',
      'wrong-applied',
      [
        '  FAIL  Deployment/staging/checkout',
        '        applied: expected [migrate-legacy-pool], got []',
        '          - applied:',
        '          -   - migrate-legacy-pool',
        '          + applied: []',
      ],
    ],
    [
      'a wrong scheduling expectation',
      'wrong-scheduling',
      [
        '  FAIL  Deployment/production/checkout',
        '        scheduling: differs as Kubernetes reads it (- expected, + actual):',
        '            annotations:',
        '          -   example.com/migration: legacy-pool',
        '          +   example.com/migration: merged-pool',
        '            required node affinity (terms ORed):',
        '              term 1:',
        '                kubernetes.io/arch In [amd64]',
        '          -     example.com/node-pool In [legacy]',
        '          +     example.com/node-pool In [merged]',
      ],
    ],
    [
      'a wrong patched resource',
      'wrong-patched-resource',
      [
        '  FAIL  StatefulSet/production/postgres',
        '        patchedResource: differs at spec.template.metadata.annotations["example.com/migration"]',
        '          +           example.com/migration: merged-pool',
      ],
    ],
    [
      'a wrong placement',
      'wrong-placement',
      [
        '  PASS  Job/batch/reindex',
        '  FAIL  CronJob/batch/nightly-report',
        '        placement: expected PodPlacement/batch-to-spot, got policy (placement policy batch/CronJob/nightly-report)',
        '          - placement: PodPlacement/batch-to-spot',
        '          + placement: policy',
      ],
    ],
    [
      'an invalid PodPlacement, which the cluster would skip',
      'invalid-placement',
      [
        '  FAIL  rules: invalid rules are skipped, as the cluster would skip them',
        '        PodPlacement "batch-mostly-spot": spec.spotPercent: must be an integer from 0 to 100 (got 120)',
        '  PASS  Job/batch/reindex',
      ],
    ],
    [
      'an invalid rule, which the cluster would skip',
      'invalid-rules',
      [
        '  FAIL  rules: invalid rules are skipped, as the cluster would skip them',
        '  PASS  Deployment/production/checkout',
      ],
    ],
  ])('fails %s with the diff, and exits 1', async (_, name, lines) => {
    const run = await runPodmutationInProcess(['test', fixture(name)]);

    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')).toEqual(expect.arrayContaining(lines));
    expect(run.stdout).toMatch(/\n\d+ passed, 1 failed in 1 test file\n$/);
  });

  it("fails a suite whose rule misspells the enforcement annotation's key, naming the key, rather than testing it as enforced", async () => {
    const folder = mkdtempSync(join(scratch, 'typo-'));
    writeFileSync(
      join(folder, 'rules.yaml'),
      stringify({
        apiVersion: 'agent.cloudpilot.ai/v1alpha1',
        kind: 'PodMutation',
        metadata: { name: 'audit-me', annotations: { 'podmutation.agent.cloudpilot.ai/enforcment': 'audit' } },
        spec: {
          enable: true,
          workloadSelector: { namespaces: ['production'] },
          mutationAdd: { nodeSelector: { 'example.com/pool': 'merged' } },
        },
      }),
    );
    writeFileSync(
      join(folder, TEST_FILE_NAME),
      stringify({
        apiVersion: 'cli.podmutation.agent.cloudpilot.ai/v1alpha1',
        kind: 'PodMutationTest',
        metadata: { name: 'typo' },
        rules: ['rules.yaml'],
        resources: [join(EXAMPLE_TESTS, 'migrate-legacy-pool/resources/checkout.yaml')],
        results: [{ resource: 'Deployment/production/checkout', applied: [] }],
      }),
    );

    const run = await runPodmutationInProcess(['test', folder]);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('  FAIL  rules: invalid rules are skipped, as the cluster would skip them');
    expect(run.stdout).toContain(
      'PodMutation "audit-me": metadata.annotations["podmutation.agent.cloudpilot.ai/enforcment"]: unknown annotation under podmutation.agent.cloudpilot.ai/; expected one of podmutation.agent.cloudpilot.ai/enforcement',
    );
  });

  it('shows the scheduling difference as explain does: the requirement that left and joined term 1, expected first', async () => {
    const run = await runPodmutationInProcess(['test', fixture('wrong-scheduling')]);

    expect(run.stdout).toContain(
      [
        '              term 1:',
        '                kubernetes.io/arch In [amd64]',
        '          -     example.com/node-pool In [legacy]',
        '          +     example.com/node-pool In [merged]',
      ].join('\n'),
    );
  });

  it('names the scheduling difference in one line in -o json, expected first', async () => {
    const run = await runPodmutationInProcess(['test', fixture('wrong-scheduling'), '-o', 'json']);

    expect(run.stdout).toContain(
      'differs as Kubernetes reads it (- expected, + actual): required node affinity (terms ORed): -{example.com/node-pool In [legacy], kubernetes.io/arch In [amd64]} +{example.com/node-pool In [merged], kubernetes.io/arch In [amd64]}; annotations: -example.com/migration: legacy-pool',
    );
  });

  it('colours the diff when standard output is a terminal, and not with NO_COLOR', async () => {
    const coloured = await runPodmutationInProcess(['test', fixture('wrong-scheduling')], { FORCE_COLOR: '1' });
    const plain = await runPodmutationInProcess(['test', fixture('wrong-scheduling')], {
      FORCE_COLOR: '1',
      NO_COLOR: '1',
    });

    expect(coloured.stdout).toContain('\u001b[31m-     example.com/node-pool In [legacy]\u001b[39m');
    expect(plain.stdout).not.toContain('\u001b[');
  });

  it('warns of a resource no result names: it is not checked', async () => {
    const run = await runPodmutationInProcess(['test', fixture('wrong-scheduling')]);

    expect(run.stdout).toMatch(
      /^ {2}warning: Deployment\/staging\/checkout \(.*checkout\.yaml: document 3 \(Deployment checkout\)\) has no result; it is not checked$/m,
    );
  });
});

describe('podmutation test on a test file that cannot be run', () => {
  it('exits 2 naming every wrong field, and still runs the other files', async () => {
    const run = await runPodmutationInProcess(['test', fixture('malformed'), fixture('wrong-applied')]);

    expect(run.code).toBe(2);
    expect(run.stdout.split('\n')).toEqual(
      expect.arrayContaining([
        '  ERROR the test file cannot be run; fix it:',
        '        rules: must be a list of paths',
        '        results[0].aplied: unknown field; expected one of resource, applied, audited, denied, scheduling, patchedResource, fit, fitMessage, placement',
        '        results[0].applied: is required',
        '        results[1].denied: must be true, false or a part of the denial message',
        '        results[1].scheduling.affinity.nodeAfinity: unknown field; expected one of nodeAffinity',
        '  FAIL  Deployment/staging/checkout',
      ]),
    );
    expect(run.stdout).toMatch(/\n1 passed, 1 failed in 2 test files; 1 test file could not be run\n$/);
  });

  it('exits 2 for results that name no resource, several, or the same one twice', async () => {
    const run = await runPodmutationInProcess(['test', fixture('unresolved')]);

    expect(run.code).toBe(2);
    expect(run.stdout).toContain(
      'results[0].resource: no resource Deployment/production/chekout in the resources (they are Deployment/production/checkout, Deployment/staging/checkout)',
    );
    expect(run.stdout).toMatch(
      /results\[1\]\.resource: Deployment\/checkout names 2 resources \(.*document 2 \(Deployment checkout\); .*document 3 \(Deployment checkout\)\); give each its own name or namespace/,
    );
    expect(run.stdout).toContain('results[3].resource: names the same resource as results[2]');
  });

  it('prints the error and the issues in -o json', async () => {
    const run = await runPodmutationInProcess(['test', fixture('malformed'), '-o', 'json']);
    const document = JSON.parse(run.stdout) as { files: { error: { issues: { field: string }[] } }[]; errors: number };

    expect(run.code).toBe(2);
    expect(document.errors).toBe(1);
    expect(document.files[0]!.error.issues.map((issue) => issue.field)).toEqual([
      'rules',
      'results[0].aplied',
      'results[0].applied',
      'results[1].denied',
      'results[1].scheduling.affinity.nodeAfinity',
    ]);
  });

  it.each([
    [
      'a path that does not exist',
      ['test', '/nonexistent/tests'],
      'podmutation test: test path /nonexistent/tests cannot be read: no such file or folder (ENOENT)\n',
    ],
    [
      'a folder without a test file',
      ['test', fixturePath('pods')],
      `podmutation test: no podmutation-test.yaml (or .yml) under ${fixturePath('pods')}; check the path, or pass --allow-empty where no tests is what you mean\n`,
    ],
    [
      'a JUnit file under a file, not a folder',
      ['test', fixture('wrong-applied'), '--junit', '/dev/null/report.xml'],
      'podmutation test: cannot make the folder /dev/null of /dev/null/report.xml: it exists, and is not a folder (EEXIST)\n',
    ],
  ])('exits 2 for %s, without a stack trace', async (_, args, stderr) => {
    const run = await runPodmutationInProcess(args);

    expect(run.code).toBe(2);
    expect(run.stderr).toBe(stderr);
  });
});
