import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runPodmutation } from '../support/cli.ts';

it('explain emits no operation on tolerations when a rule removes tolerations by key from a Pod that has none', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'no-op-patch-'));
  const rules = join(folder, 'drop-spot.yaml');
  const pod = join(folder, 'pod.yaml');
  writeFileSync(
    rules,
    stringify({
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'drop-spot-toleration' },
      spec: {
        enable: true,
        workloadSelector: { all: true },
        mutationRemove: { tolerations: { keys: ['example.com/spot'] } },
      },
    }),
  );
  writeFileSync(
    pod,
    stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'production' },
      spec: { containers: [{ name: 'app', image: 'app' }] },
    }),
  );

  const run = await runPodmutation(['explain', '--rules', rules, '-o', 'json', pod]);

  const { pods } = JSON.parse(run.stdout) as { pods: { patch: { path: string }[] }[] };
  expect(pods[0]!.patch.map(({ path }) => path)).toEqual(['/metadata/annotations']);
});
