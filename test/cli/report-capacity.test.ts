/** `podmutation report` against a capacity: --capacity files with --objects, and the cluster's own Nodes and NodePools. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { MigrationReport } from '../../lib/report/index.ts';
import { nodeObject } from '../capacity/support.ts';
import type { FakeApiServer } from '../cluster/fake-api-server.ts';
import { clusterList, fixtureCluster, rulePaths, writeTemporary, type KubectlList } from '../report/support.ts';
import { runPodmutationInProcess } from '../support/cli.ts';
import { fixturePath } from '../support/fixtures.ts';

// Nodes of every pool the fixture's rules target (legacy, merged, batch-spot) and the NodePools general and gpu.
const CAPACITY = fixturePath('capacity/kubectl-get-nodes-nodepools.yaml');
const CAPACITY_LIST = parseAllDocuments(readFileSync(CAPACITY, 'utf8'))[0]!.toJS() as KubectlList;
// Only the legacy pool's Nodes: the migration's target, merged, does not exist.
const LEGACY_ONLY = [
  nodeObject('legacy-1', { 'example.com/node-pool': 'legacy', 'kubernetes.io/arch': 'amd64' }),
  nodeObject('legacy-2', { 'example.com/node-pool': 'legacy', 'kubernetes.io/arch': 'amd64' }),
];
const CONTRADICTIONS_ONLY =
  'where Pods fit is judged on their own contradictions only (nodeSelector against required terms)';

const rulesArgs = () => rulePaths().flatMap((path) => ['--rules', path]);

let objects: string;

beforeAll(async () => {
  objects = writeTemporary('cluster.json', await clusterList());
});

function fits(report: MigrationReport): Record<string, string | undefined> {
  return Object.fromEntries(report.workloads.map((item) => [item.name, item.fit?.reason]));
}

async function reportJson(args: readonly string[]): Promise<MigrationReport> {
  const run = await runPodmutationInProcess(['report', ...args, '-o', 'json']);
  expect(run.code, run.stderr).toBe(1);
  return JSON.parse(run.stdout) as MigrationReport;
}

describe('podmutation report --objects --capacity', () => {
  it('says where each workload fits once its Pods are recreated', async () => {
    const report = await reportJson(['--objects', objects, ...rulesArgs(), '--capacity', CAPACITY]);

    expect(fits(report)).toEqual({
      'nightly-report': 'fits 2 Nodes',
      checkout: 'fits 2 Nodes',
      web: 'fits 2 Nodes',
      toolbox: 'fits NodePool general; 6 Nodes',
      storefront: 'fits 4 Nodes',
      ledger: undefined,
    });
  });

  it('says a workload fits nowhere, and counts the Pods its rule stranded', async () => {
    const legacyOnly = writeTemporary('legacy.json', { apiVersion: 'v1', kind: 'List', items: LEGACY_ONLY });
    const report = await reportJson(['--objects', objects, ...rulesArgs(), '--capacity', legacyOnly]);

    expect(report.workloads.find((item) => item.name === 'web')?.fit).toEqual({
      kind: 'nowhere',
      reason: expect.stringMatching(
        /^fits nowhere: no Node and no NodePool takes it; closest: Node legacy-1/,
      ) as unknown,
    });
    expect(report.rules.find((item) => item.name === 'migrate-legacy-pool')?.unschedulable).toBe(5);
  });

  it('leaves the restart of such a workload out of --restart-commands, saying why, unless --allow-unschedulable', async () => {
    const legacyOnly = writeTemporary('legacy.json', { apiVersion: 'v1', kind: 'List', items: LEGACY_ONLY });
    const args = ['report', '--objects', objects, ...rulesArgs(), '--capacity', legacyOnly, '--restart-commands'];

    const refused = await runPodmutationInProcess(args);
    const allowed = await runPodmutationInProcess([...args, '--allow-unschedulable']);

    expect(refused.stdout).toMatch(
      /^# unschedulable, not restarted \(--allow-unschedulable restarts it\): Deployment production\/web \(2 pending Pods\): fits nowhere: /m,
    );
    expect(refused.stdout).not.toContain('kubectl rollout restart deployment/web');
    expect(allowed.stdout).toContain('kubectl rollout restart deployment/web -n production\n');
  });

  it.each([
    [
      '--capacity without --objects',
      ['--kubeconfig', 'k', '--capacity', CAPACITY],
      '--capacity goes with --objects: from a cluster, its own Nodes and NodePools are read',
    ],
    [
      '--allow-unschedulable without --restart-commands',
      ['--objects', 'o.json', '--rules', 'r', '--allow-unschedulable'],
      '--allow-unschedulable goes with --restart-commands',
    ],
  ])('exits 2 for %s', async (_name, args, message) => {
    const run = await runPodmutationInProcess(['report', ...args]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });
});

describe('podmutation report --kubeconfig: the capacity the cluster lists', () => {
  let server: FakeApiServer;
  let kubeconfig: string;

  beforeAll(async () => {
    ({ server, kubeconfig } = await fixtureCluster(CAPACITY_LIST));
  });

  afterAll(async () => server.close());

  it('judges the Pods against the Nodes and NodePools it lists, as --capacity does against the same objects', async () => {
    const run = await runPodmutationInProcess(['report', '--kubeconfig', kubeconfig, '-A', ...rulesArgs()]);

    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('\ncapacity: 9 Nodes and 2 NodePools read from the cluster\nnote: where a Pod fits');
    expect(await reportJson(['--kubeconfig', kubeconfig, '-A', ...rulesArgs()])).toEqual(
      await reportJson(['--objects', objects, ...rulesArgs(), '--capacity', CAPACITY]),
    );
  });

  it('goes on judging contradictions only when it may not list Nodes, and says so on stderr and in the table', async () => {
    server.fail(
      {
        kind: 'status',
        code: 403,
        reason: 'Forbidden',
        message: 'nodes is forbidden: User "report" cannot list resource "nodes"',
      },
      { resource: 'nodes' },
    );
    try {
      const table = await runPodmutationInProcess(['report', '--kubeconfig', kubeconfig, '-A', ...rulesArgs()]);
      const json = await reportJson(['--kubeconfig', kubeconfig, '-A', ...rulesArgs()]);

      expect(table.code).toBe(1);
      expect(table.stderr).toMatch(
        new RegExp(
          `^warning: reading the Nodes and NodePools failed: listing nodes failed: 403 Forbidden: .*; ${CONTRADICTIONS_ONLY.replace(/[()]/g, '\\$&')}\n$`,
        ),
      );
      expect(table.stdout).toMatch(
        /\ncapacity: not read \(reading the Nodes and NodePools failed: listing nodes failed: 403 Forbidden/,
      );
      expect(json.workloads.find((item) => item.name === 'web')?.fit).toEqual({
        kind: 'unknown',
        reason: 'not judged: no capacity given',
      });
    } finally {
      server.clearFaults();
    }
  });

  it('fails with exit 2 when the cluster cannot be reached, as for the Pods', async () => {
    server.fail({ kind: 'reset' }, { resource: 'nodes' });
    try {
      const run = await runPodmutationInProcess(['report', '--kubeconfig', kubeconfig, '-A', ...rulesArgs()]);

      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^podmutation report: listing nodes failed/);
    } finally {
      server.clearFaults();
    }
  });
});

describe('podmutation report --kubeconfig: a cluster that lists no Node and no NodePool', () => {
  let server: FakeApiServer;
  let kubeconfig: string;

  beforeAll(async () => {
    ({ server, kubeconfig } = await fixtureCluster({ apiVersion: 'v1', kind: 'List', metadata: {}, items: [] }));
  });

  afterAll(async () => server.close());

  it('reads it as a wrong read, not as a cluster where every Pod fits nowhere: a warning, and contradictions only', async () => {
    const run = await runPodmutationInProcess([
      'report',
      '--kubeconfig',
      kubeconfig,
      '-A',
      ...rulesArgs(),
      '-o',
      'json',
    ]);

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`warning: the cluster lists no Node and no NodePool; ${CONTRADICTIONS_ONLY}\n`);
    const report = JSON.parse(run.stdout) as MigrationReport;
    expect(report.workloads.some((item) => item.fit?.kind === 'nowhere')).toBe(false);
  });
});
