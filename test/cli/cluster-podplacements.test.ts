/**
 * `report` and `rollout` reading a live cluster run its PodPlacements with its PodMutations, listed and validated by
 * the sync's own step (lib/sync listAndValidate): what the snapshot admission reads.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import type { MigrationReport } from '../../lib/report/index.ts';
import type { RolloutRecord } from '../../lib/rollout/index.ts';
import type { FakeApiServer, PodMutationInput } from '../cluster/fake-api-server.ts';
import { clusterList, fixtureCluster, rulePaths, writeTemporary, type KubectlList } from '../report/support.ts';
import { runPodmutationInProcess } from '../support/cli.ts';
import { fixturePath } from '../support/fixtures.ts';

const CAPACITY = fixturePath('capacity/kubectl-get-nodes-nodepools.yaml');

/** The PodPlacement that moves the fixture's checkout Deployment to Spot. */
const CHECKOUT_TO_SPOT = {
  apiVersion: 'agent.cloudpilot.ai/v1alpha1',
  kind: 'PodPlacement',
  metadata: { name: 'checkout-to-spot' },
  spec: { enable: true, workloadSelector: { namespaces: ['production'], names: ['checkout'] }, mode: 'Spot' },
};

/** A PodPlacement the validator refuses at spec.spotPercent (the CRD's schema would refuse it too; the fake has none). */
const TOO_MUCH_SPOT = {
  ...CHECKOUT_TO_SPOT,
  metadata: { name: 'too-much-spot' },
  spec: { ...CHECKOUT_TO_SPOT.spec, mode: 'Diversity', spotPercent: 120 },
};

const NO_CRD_NOTE =
  'note: the cluster has no PodPlacement CRD (listing podplacements.agent.cloudpilot.ai answered 404): no PodPlacement places its Pods\n';

let server: FakeApiServer;
let kubeconfig: string;
let objects: string;

/** The fixture's PodMutations as the cluster holds them (the rules as checkout rolled out). */
function fixturePodMutations(): PodMutationInput[] {
  const files = rulePaths().flatMap((path) =>
    path.endsWith('.yaml') ? [path] : readdirSync(path).map((name) => join(path, name)),
  );
  return files.map((file) => parseAllDocuments(readFileSync(file, 'utf8'))[0]!.toJS() as PodMutationInput);
}

beforeAll(async () => {
  const capacity = parseAllDocuments(readFileSync(CAPACITY, 'utf8'))[0]!.toJS() as KubectlList;
  ({ server, kubeconfig } = await fixtureCluster(capacity));
  for (const resource of fixturePodMutations()) server.put(resource);
  objects = writeTemporary('cluster.json', await clusterList());
});

afterEach(() => {
  server.clearFaults();
  server.setPlacementsInstalled(true);
  for (const name of server.placementNames()) server.removePlacement(name);
});

afterAll(async () => server.close());

/** `podmutation report --kubeconfig` of every namespace, as JSON, with what it said on stderr and its exit code. */
async function clusterReport(): Promise<{ code: number; stderr: string; report: MigrationReport }> {
  const run = await runPodmutationInProcess(['report', '--kubeconfig', kubeconfig, '-A', '-o', 'json']);
  return { code: run.code, stderr: run.stderr, report: JSON.parse(run.stdout) as MigrationReport };
}

/** checkout's pending Pods in a report. */
const checkoutPending = (report: MigrationReport) => report.workloads.find(({ name }) => name === 'checkout')?.pending;

describe("podmutation report --kubeconfig with the cluster's PodPlacements", () => {
  it('reads checkout current without a PodPlacement, and pending once one moves it to Spot', async () => {
    const before = await clusterReport();
    server.putPlacement(CHECKOUT_TO_SPOT);
    const after = await clusterReport();

    expect(checkoutPending(before.report)).toBe(0);
    expect(checkoutPending(after.report)).toBe(2);
    expect(after.report.workloads.find(({ name }) => name === 'checkout')?.change).toContain(
      'karpenter.sh/capacity-type',
    );
    expect(after).toMatchObject({ code: 1, stderr: '' });
  });

  it('reports exactly what the same PodPlacement in a rules path makes the offline report say', async () => {
    server.putPlacement(CHECKOUT_TO_SPOT);
    const placementFile = writeTemporary('checkout-to-spot.yaml', stringify(CHECKOUT_TO_SPOT));
    const rules = [...rulePaths(), placementFile].flatMap((path) => ['--rules', path]);

    const offline = await runPodmutationInProcess([
      'report',
      '--objects',
      objects,
      ...rules,
      '--capacity',
      CAPACITY,
      '-o',
      'json',
    ]);

    expect((await clusterReport()).report).toEqual(JSON.parse(offline.stdout));
  });

  it('skips an invalid PodPlacement as the sync does, naming its field on stderr, and exits 1', async () => {
    server.putPlacement(TOO_MUCH_SPOT);

    const { code, stderr, report } = await clusterReport();

    expect(code).toBe(1);
    expect(stderr).toBe(
      'invalid placement skipped: PodPlacement "too-much-spot": spec.spotPercent: must be an integer from 0 to 100 (got 120)\n',
    );
    expect(checkoutPending(report)).toBe(0);
  });

  it('reads a cluster without the PodPlacement CRD as one without PodPlacements, saying so once', async () => {
    server.setPlacementsInstalled(false);

    const { code, stderr, report } = await clusterReport();

    expect(stderr).toBe(NO_CRD_NOTE);
    expect(checkoutPending(report)).toBe(0);
    expect(code).toBe(report.totals.pending + report.totals.denied > 0 ? 1 : 0);
  });

  it('exits 2 when it may not list PodPlacements, naming the ClusterRole that grants it', async () => {
    server.fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { resource: 'podplacements' });

    const run = await runPodmutationInProcess(['report', '--kubeconfig', kubeconfig, '-A']);

    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(
      /^podmutation report: listing podplacements\.agent\.cloudpilot\.ai failed: 403 Forbidden/,
    );
    expect(run.stderr).toContain(
      'podplacements are cluster-scoped, which no RoleBinding grants: bind the ClusterRole podmutation-report-cluster-scoped of infra/rbac-report.yaml (report) or podmutation-rollout-cluster-scoped of infra/rbac-rollout.yaml (rollout)',
    );
  });
});

describe("podmutation rollout --kubeconfig with the cluster's PodPlacements", () => {
  /** The workloads a dry run plans, by name. */
  async function planned(): Promise<{ names: string[]; stderr: string }> {
    const run = await runPodmutationInProcess(['rollout', '--kubeconfig', kubeconfig, '-A', '--dry-run', '-o', 'json']);
    const records = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as RolloutRecord);
    const names = records.flatMap((record) =>
      record.type === 'workload' && record.state === 'planned' ? [record.name] : [],
    );
    return { names, stderr: run.stderr };
  }

  it('plans checkout once a PodPlacement moves it to Spot, and not before', async () => {
    const before = await planned();
    server.putPlacement(CHECKOUT_TO_SPOT);
    const after = await planned();

    expect(before.names).not.toContain('checkout');
    expect([...after.names].sort()).toEqual([...before.names, 'checkout'].sort());
  });

  it('notes a cluster without the PodPlacement CRD once, though it reads the report twice', async () => {
    server.setPlacementsInstalled(false);

    const from = server.requests.length;

    // batch holds only a CronJob, which is recreated by hand: a rollout there reads the report twice and changes nothing.
    const run = await runPodmutationInProcess(['rollout', '--kubeconfig', kubeconfig, '-n', 'batch', '-o', 'json']);

    expect(run.stderr).toBe(NO_CRD_NOTE);
    const requests = server.requests.slice(from);
    expect(requests.filter(({ path }) => path.endsWith('/podplacements'))).toHaveLength(2);
    expect(requests.every(({ method }) => method === 'GET')).toBe(true);
  });
});
