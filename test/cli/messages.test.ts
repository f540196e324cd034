/** The CLI's messages a newcomer meets first, each as a user meets it running the CLI. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runPodmutation } from '../support/cli.ts';
import { EXAMPLES, fixturePath, fixtureText } from '../support/fixtures.ts';

const folder = mkdtempSync(join(tmpdir(), 'messages-'));
const ROOT = fixturePath('../..');

/** A Deployment's Pod in production whose required node affinity is `kubernetes.io/arch In [amd64]` only. */
function podWithoutLegacyPool(): string {
  const path = join(folder, 'pod.yaml');
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: 'checkout-7d9f8b6c5d-',
        namespace: 'production',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'checkout-7d9f8b6c5d', controller: true }],
        labels: { 'pod-template-hash': '7d9f8b6c5d' },
      },
      spec: {
        containers: [{ name: 'app', image: 'app' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] },
              ],
            },
          },
        },
      },
    }),
  );
  return path;
}

describe('messages', () => {
  it('explain names the requirement a failed nodeAffinityMatch misses', async () => {
    const run = await runPodmutation(['explain', '--rules', EXAMPLES, podWithoutLegacyPool()]);

    expect(run.stdout).toContain(
      'migrate-legacy-pool: nodeAffinityMatch.required: no Pod term holds every requirement of a selector term; the closest lacks example.com/node-pool In [legacy]',
    );
  });

  it('explain counts one patch operation in the singular', async () => {
    const rules = join(folder, 'one-operation.yaml');
    writeFileSync(
      rules,
      stringify({
        apiVersion: 'agent.cloudpilot.ai/v1alpha1',
        kind: 'PodMutation',
        metadata: { name: 'one-operation' },
        spec: { enable: true, workloadSelector: { all: true }, mutationAdd: { annotations: { 'example.com/a': 'b' } } },
      }),
    );

    const run = await runPodmutation(['explain', '--rules', rules, podWithoutLegacyPool()]);

    expect(run.stdout).toContain('result: mutated (1 patch operation)\n');
    const single = await runPodmutation(['explain', '--rules', rules, '-o', 'json', podWithoutLegacyPool()]);
    expect((JSON.parse(single.stdout) as { pods: { patch: unknown[] }[] }).pods[0]!.patch).toHaveLength(1);
  });

  it('review of several documents points at --wrap', async () => {
    const review = stringify(JSON.parse(fixtureText('reviews/deployment-legacy-pool.json')));

    const run = await runPodmutation(['review', '--rules', EXAMPLES, '-'], `${review}---\n${review}`);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('expected one document, found 2');
    expect(run.stderr).toContain('--wrap answers each Pod or workload of several documents');
  });

  it('rollout --help mentions no --objects, which rollout lacks', async () => {
    const run = await runPodmutation(['rollout', '--help']);

    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('--objects');
  });

  it.each([['placement'], ['sync']])('%s --help defines TARGET', async (...command) => {
    const run = await runPodmutation([...command, '--help']);

    expect(run.stdout.replace(/\s+/g, ' ')).toContain('TARGET is the rules table: --stage STAGE');
  });
});

describe('the docs a newcomer copies', () => {
  it('the quick start and the offline profile send the printed URL, never a literal <token> the shell reads as a redirect', () => {
    for (const file of ['README.md', 'docs/cli.md']) {
      const shell = readFileSync(join(ROOT, file), 'utf8')
        .split('```sh')
        .slice(1)
        .map((block) => block.split('```')[0]!);
      for (const line of shell.flatMap((block) => block.split('\n'))) {
        const command = line.replace(/#.*$/, '').replace(/'[^']*'|"[^"]*"/g, "''");
        expect(command, `${file}: ${line}`).not.toMatch(/<[a-z-]+>/);
      }
    }
  });

  it('docs/placement.md writes the placements file with -o yaml, the form --placements reads', () => {
    const lines = readFileSync(join(ROOT, 'docs/placement.md'), 'utf8')
      .split('\n')
      .filter((line) => /placement list .*>/.test(line));

    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toContain('-o yaml');
  });
});
