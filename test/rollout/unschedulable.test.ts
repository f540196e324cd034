/** `podmutation rollout` never restarts a workload whose recreated Pods would fit no Node and no NodePool of the cluster. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutRecord } from '../../lib/rollout/index.ts';
import { nodeObject } from '../capacity/support.ts';
import type { FakeApiServer } from '../cluster/fake-api-server.ts';
import { fixtureCluster, rulePaths } from '../report/support.ts';
import { fitCaveatLine } from '../../lib/cli/options/capacity.ts';
import { runPodmutationInProcess } from '../support/cli.ts';

const rulesArgs = () => rulePaths('changed').flatMap((path) => ['--rules', path]);

function records(stdout: string): RolloutRecord[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as RolloutRecord);
}

/** Each workload record's name and state, and the verdict's unschedulable count. */
function states(stdout: string): Record<string, string | number> {
  const pairs = records(stdout).map((record): [string, string | number] =>
    record.type === 'workload' ? [record.name, record.state] : ['(verdict) unschedulable', record.unschedulable],
  );
  return Object.fromEntries(pairs);
}

describe('podmutation rollout in a cluster without the rules’ target pools', () => {
  let server: FakeApiServer;
  let kubeconfig: string;

  beforeAll(async () => {
    // Only the legacy pool: merged-2024 (checkout), merged (web, storefront) and batch-spot (nightly-report) are missing.
    const items = ['legacy-1', 'legacy-2'].map((name) =>
      nodeObject(name, { 'example.com/node-pool': 'legacy', 'kubernetes.io/arch': 'amd64' }),
    );
    ({ server, kubeconfig } = await fixtureCluster({ apiVersion: 'v1', kind: 'List', metadata: {}, items }));
  });

  /** `podmutation rollout` of every namespace under the changed rules, with these flags. */
  const rollout = (...flags: string[]) =>
    runPodmutationInProcess(['rollout', '--kubeconfig', kubeconfig, '-A', ...rulesArgs(), ...flags]);

  afterAll(async () => server.close());

  it('lists each such workload as unschedulable, starts none and exits 1', async () => {
    const before = server.requests.length;

    const run = await rollout('-o', 'json');

    expect(run.code, run.stderr).toBe(1);
    expect(states(run.stdout)).toEqual({
      'nightly-report': 'unschedulable',
      checkout: 'unschedulable',
      web: 'unschedulable',
      toolbox: 'by-hand',
      storefront: 'unschedulable',
      ledger: 'denied',
      '(verdict) unschedulable': 4,
    });
    expect(server.requests.slice(before).every((request) => request.method === 'GET')).toBe(true);
  });

  it('gives the verdict as the reason: fits nowhere, and the closest candidates', async () => {
    const run = await rollout('--dry-run');

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^- Deployment production\/web: unschedulable \(fits nowhere: no Node and no NodePool takes it; closest: Node legacy-1 .*\)$/m,
    );
    expect(run.stdout.split('\n').filter((line) => line === fitCaveatLine())).toHaveLength(1);
  });

  it('plans them with --allow-unschedulable', async () => {
    const run = await rollout('--dry-run', '--allow-unschedulable', '-o', 'json');

    expect(run.code).toBe(1);
    expect(states(run.stdout)).toMatchObject({ checkout: 'planned', web: 'planned', storefront: 'planned' });
  });

  describe('when it may not list Nodes', () => {
    const forbidden = { kind: 'status', code: 403, reason: 'Forbidden' } as const;

    it('restarts nothing and exits 2, saying why and what to grant', async () => {
      server.fail(forbidden, { resource: 'nodes' });
      const before = server.requests.length;
      try {
        const run = await rollout('-o', 'json');

        expect(run).toMatchObject({ code: 2, stdout: '' });
        expect(run.stderr).toMatch(
          /\npodmutation rollout: rollout cannot tell whether the recreated Pods would fit: reading the Nodes and NodePools failed: listing nodes failed: 403 Forbidden.*; nothing was restarted\. Grant list on nodes and nodepools\.karpenter\.sh \(infra\/rbac-rollout\.yaml\), or pass --allow-unschedulable/,
        );
        expect(server.requests.slice(before).every((request) => request.method === 'GET')).toBe(true);
      } finally {
        server.clearFaults();
      }
    });

    it('still prints the plan of a dry run, judged on contradictions only', async () => {
      server.fail(forbidden, { resource: 'nodes' });
      try {
        const run = await rollout('--dry-run', '-o', 'json');

        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/^warning: reading the Nodes and NodePools failed/);
        expect(states(run.stdout)).toMatchObject({ checkout: 'planned', web: 'planned' });
      } finally {
        server.clearFaults();
      }
    });
  });
});
