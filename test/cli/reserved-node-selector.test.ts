import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runPodmutation } from '../support/cli.ts';

const folder = mkdtempSync(join(tmpdir(), 'reserved-node-selector-'));

function write(name: string, value: unknown): string {
  const path = join(folder, name);
  writeFileSync(path, stringify(value));
  return path;
}

const rule = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'agent.cloudpilot.ai/v1alpha1',
  kind: 'PodMutation',
  metadata: { name },
  spec: { enable: true, ...spec },
});

describe("a reserved key in a Pod's nodeSelector", () => {
  it('may be matched and removed: explain drops an instance-type pin', async () => {
    const rules = write(
      'drop-pin.yaml',
      rule('drop-instance-type-pin', {
        workloadSelector: { nodeSelectorMatch: { 'node.kubernetes.io/instance-type': 'm5.large' } },
        mutationRemove: { nodeSelector: { keys: ['node.kubernetes.io/instance-type'] } },
      }),
    );
    const pod = write('pod.yaml', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'production' },
      spec: {
        nodeSelector: { 'node.kubernetes.io/instance-type': 'm5.large' },
        containers: [{ name: 'a', image: 'a' }],
      },
    });

    const [validated, explained] = await Promise.all([
      runPodmutation(['validate', rules]),
      runPodmutation(['explain', '--rules', rules, '-o', 'json', pod]),
    ]);

    expect(validated.code).toBe(0);
    const { pods } = JSON.parse(explained.stdout) as {
      pods: { applied: string[]; patch: { op: string; path: string }[] }[];
    };
    expect(pods[0]!.applied).toEqual(['drop-instance-type-pin']);
    expect(pods[0]!.patch).toContainEqual({
      op: 'remove',
      path: '/spec/nodeSelector/node.kubernetes.io~1instance-type',
    });
  });

  it('may not be added', async () => {
    const rules = write(
      'add-pin.yaml',
      rule('add-capacity-type', {
        workloadSelector: { all: true },
        mutationAdd: { nodeSelector: { 'karpenter.sh/capacity-type': 'spot' } },
      }),
    );

    const run = await runPodmutation(['validate', rules]);

    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain('spec.mutationAdd.nodeSelector');
  });
});
