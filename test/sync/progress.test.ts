/**
 * Migration progress on each rule's and PodPlacement's status: the sync's report through the fake API server
 * (PodMutations, PodPlacements, Pods and owners, paginated) and dynalite; counts written only on change, at most once
 * per interval.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createWorkloadObjectSource } from '../../lib/cluster/index.ts';
import type { ProgressDependencies } from '../../lib/sync/index.ts';
import { pendingMetricRules } from '../../lib/sync/progress.ts';
import { kubeconfigFor } from '../cluster/fake-api-server.ts';
import { manualClock, syncSubject, useSyncWorld, validSpec } from './support.ts';

const world = useSyncWorld();

/** A bare Pod in namespace apps, on the given pool (none: no nodeSelector). */
function pod(name: string, pool?: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'apps', uid: `uid-${name}` },
    spec: {
      containers: [{ name: 'app', image: 'app:1' }],
      ...(pool === undefined ? {} : { nodeSelector: { 'example.com/pool': pool } }),
    },
  };
}

function progress(
  clusterId: string,
  intervalMinutes = 5,
  pendingPodsMetric?: ProgressDependencies['pendingPodsMetric'],
): ProgressDependencies {
  return {
    objects: createWorkloadObjectSource({ mode: 'kubeconfigText', text: kubeconfigFor(world.server) }, { pageSize: 2 }),
    intervalMinutes,
    records: world.records(clusterId),
    ...(pendingPodsMetric === undefined ? {} : { pendingPodsMetric }),
  };
}

function statusOf(name: string): Record<string, unknown> {
  return (world.server.get(name)?.['status'] ?? {}) as Record<string, unknown>;
}

function placementStatusOf(name: string): Record<string, unknown> {
  return (world.server.getPlacement(name)?.['status'] ?? {}) as Record<string, unknown>;
}

/** Required node affinity on on-demand capacity, as the karpenter flavour's NonSpot placement adds it. */
const ON_DEMAND_AFFINITY = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] },
      ],
    },
  },
};

/** Every Pod of the apps namespace on on-demand capacity. */
const WEB_ON_DEMAND = {
  metadata: { name: 'web-on-demand' },
  spec: { enable: true, workloadSelector: { namespaces: ['apps'] }, mode: 'NonSpot' },
};

/**
 * The Deployment apps/web (on the general pool, as the rule general-pool wants), its ReplicaSet and one Pod per entry
 * of `affinities`, each with that affinity (undefined: none): the template has none, as placement adds it at admission.
 */
function putWebDeployment(affinities: readonly (typeof ON_DEMAND_AFFINITY | undefined)[]): void {
  const labels = { app: 'web', 'pod-template-hash': '5d8f7c9b6d' };
  const template = {
    metadata: { labels },
    spec: { containers: [{ name: 'app', image: 'app:1' }], nodeSelector: { 'example.com/pool': 'general' } },
  };
  const owner = (kind: string, name: string) => [{ apiVersion: 'apps/v1', kind, name, controller: true }];
  world.server.clearObjects();
  world.server.putObjects([
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'apps' },
      spec: { selector: { matchLabels: { app: 'web' } }, template },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-5d8f7c9b6d', namespace: 'apps', labels, ownerReferences: owner('Deployment', 'web') },
      spec: { template },
    },
    ...affinities.map((affinity, index) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `web-5d8f7c9b6d-${index}`,
        namespace: 'apps',
        labels,
        ownerReferences: owner('ReplicaSet', 'web-5d8f7c9b6d'),
      },
      spec: { ...template.spec, ...(affinity === undefined ? {} : { affinity }) },
    })),
  ]);
}

const podLists = () => world.server.requests.filter((request) => request.path.endsWith('/pods')).length;

beforeEach(() => {
  world.server.clearObjects();
  world.server.removePlacement('web-on-demand');
  world.server.put({ metadata: { name: 'general-pool' }, spec: validSpec('general') });
  world.server.putObjects([
    pod('moved', 'general'),
    pod('waiting-1'),
    pod('waiting-2'),
    { ...pod('elsewhere'), metadata: { name: 'elsewhere', namespace: 'web' } },
  ]);
});

describe('migration progress on the rules status', () => {
  it('writes each rule the Pods it matches and those a rollout would still change, with the report time', async () => {
    const clock = manualClock(Date.parse('2026-12-01T10:00:00.000Z'));
    const subject = syncSubject(world, (clusterId) => ({ clock, progress: progress(clusterId) }));

    const report = await subject.sync();

    expect(report.progress).toMatchObject({ pods: 4, pendingPods: 2, statusPatched: 1, statusFailed: 0 });
    expect(statusOf('general-pool')).toMatchObject({
      matchedPods: 3,
      pendingPods: 2,
      lastReportTime: '2026-12-01T10:00:00.000Z',
    });
  });

  it('does not list Pods again before the interval has passed', async () => {
    const clock = manualClock();
    const subject = syncSubject(world, (clusterId) => ({ clock, progress: progress(clusterId, 5) }));
    await subject.sync();
    const listed = podLists();

    clock.advance(4 * 60_000);
    const report = await subject.sync();

    expect(report.progress).toBeUndefined();
    expect(podLists()).toBe(listed);
  });

  it('writes no status at the next interval when the counts did not change', async () => {
    const clock = manualClock();
    const subject = syncSubject(world, (clusterId) => ({ clock, progress: progress(clusterId, 5) }));
    await subject.sync();

    clock.advance(5 * 60_000);
    const report = await subject.sync();

    expect(report.progress).toMatchObject({ pods: 4, statusPatched: 0 });
    expect(statusOf('general-pool')['lastReportTime']).toBe(new Date(clock() - 5 * 60_000).toISOString());
  });

  it('counts a Pod as current once it was recreated with the rule applied', async () => {
    const clock = manualClock();
    const subject = syncSubject(world, (clusterId) => ({ clock, progress: progress(clusterId, 1) }));
    await subject.sync();

    world.server.putObjects([pod('waiting-1', 'general'), pod('waiting-2', 'general')]);
    clock.advance(60_000);
    await subject.sync();

    expect(statusOf('general-pool')).toMatchObject({ matchedPods: 3, pendingPods: 0 });
  });

  it('keeps the sync published and the counts as they were when listing Pods fails', async () => {
    const clock = manualClock();
    const subject = syncSubject(world, (clusterId) => ({ clock, progress: progress(clusterId, 1) }));
    await subject.sync();
    world.server.fail({ kind: 'status', code: 403 }, { resource: 'pods' });

    clock.advance(60_000);
    const report = await subject.sync();

    expect(report.outcome).toBe('unchanged');
    expect(report.progress?.error).toMatch(/pods/);
    expect(subject.recorder.emitted).toContainEqual({ name: 'ReportErrors', unit: 'Count', value: 1 });
    expect(statusOf('general-pool')).toMatchObject({ matchedPods: 3, pendingPods: 2 });
  });

  it('writes the counts without RuntimeClasses when its access may not list them, and logs a warning', async () => {
    world.server.fail({ kind: 'status', code: 403 }, { resource: 'runtimeclasses' });
    const subject = syncSubject(world, (clusterId) => ({ progress: progress(clusterId) }));

    const report = await subject.sync();

    expect(report.progress).toMatchObject({ pods: 4, pendingPods: 2 });
    expect(report.progress?.error).toBeUndefined();
    expect(statusOf('general-pool')).toMatchObject({ matchedPods: 3, pendingPods: 2 });
    const warnings = subject.recorder.logs.filter((entry) => entry.level === 'warn');
    expect(warnings.map((entry) => entry.message)).toEqual([
      expect.stringMatching(
        /^listing runtimeclasses\.node\.k8s\.io failed: 403 Forbidden: .*read from the running Pods/,
      ),
    ]);
    expect(warnings[0]?.fields).toHaveProperty('clusterId');
  });

  it.each([
    { source: 'no placement', policy: false, podPlacement: false, pendingPods: 1 },
    { source: 'a placement policy of the table', policy: true, podPlacement: false, pendingPods: 0 },
    { source: 'a PodPlacement of the cluster', policy: false, podPlacement: true, pendingPods: 0 },
  ])('with $source, counts a Pod that placement put on on-demand capacity as $pendingPods pending', async (row) => {
    putWebDeployment([ON_DEMAND_AFFINITY]);
    if (row.podPlacement) world.server.putPlacement(WEB_ON_DEMAND);
    const policies = row.policy
      ? [{ namespace: 'apps', kind: 'Deployment', name: 'web', mode: 'NonSpot' as const }]
      : [];

    const report = await syncSubject(world, (clusterId) => ({
      progress: {
        ...progress(clusterId),
        placement: { flavour: 'karpenter', policies: () => Promise.resolve(policies) },
      },
    })).sync();

    expect(report.progress).toMatchObject({ pods: 1, pendingPods: row.pendingPods });
  });

  it('writes each PodPlacement the live Pods it places and those already placed, only when they change', async () => {
    putWebDeployment([ON_DEMAND_AFFINITY, undefined, undefined]);
    world.server.putPlacement(WEB_ON_DEMAND);
    const clock = manualClock(Date.parse('2026-12-01T10:00:00.000Z'));
    const subject = syncSubject(world, (clusterId) => ({ clock, progress: progress(clusterId, 1) }));

    await subject.sync();
    const written = world.server.statusPatches.length;
    clock.advance(60_000);
    const again = await subject.sync();

    expect(placementStatusOf('web-on-demand')).toMatchObject({
      matchedPods: 3,
      placedPods: 1,
      lastReportTime: '2026-12-01T10:00:00.000Z',
    });
    expect(again.progress).toMatchObject({ statusPatched: 0 });
    expect(world.server.statusPatches.length).toBe(written);
  });

  it('counts no Pod for a PodPlacement a placement policy of the table overrides', async () => {
    putWebDeployment([ON_DEMAND_AFFINITY]);
    world.server.putPlacement(WEB_ON_DEMAND);
    const policies = [{ namespace: 'apps', kind: 'Deployment', name: 'web', mode: 'NonSpot' as const }];

    await syncSubject(world, (clusterId) => ({
      progress: {
        ...progress(clusterId),
        placement: { flavour: 'karpenter', policies: () => Promise.resolve(policies) },
      },
    })).sync();

    expect(placementStatusOf('web-on-demand')).toMatchObject({ matchedPods: 0, placedPods: 0 });
  });

  it('removes the counts of a PodPlacement that became invalid', async () => {
    putWebDeployment([ON_DEMAND_AFFINITY]);
    world.server.putPlacement(WEB_ON_DEMAND);
    const clock = manualClock();
    const subject = syncSubject(world, (clusterId) => ({ clock, progress: progress(clusterId, 1) }));
    await subject.sync();

    world.server.putPlacement({ ...WEB_ON_DEMAND, spec: { ...WEB_ON_DEMAND.spec, mdoe: 'Spot' } });
    clock.advance(60_000);
    await subject.sync();

    const status = placementStatusOf('web-on-demand');
    expect(status).not.toHaveProperty('matchedPods');
    expect(status).not.toHaveProperty('placedPods');
    expect(status['conditions']).toContainEqual(expect.objectContaining({ type: 'Accepted', status: 'False' }));
  });

  it('emits PendingPods for the rules with pending Pods', async () => {
    const emitted: [string, number][] = [];
    const subject = syncSubject(world, (clusterId) => ({
      progress: progress(clusterId, 5, (rule, pending) => emitted.push([rule, pending])),
    }));

    await subject.sync();

    expect(emitted).toEqual([['general-pool', 2]]);
  });
});

describe('the rules PendingPods is emitted for', () => {
  it('are at most ten, the most pending first, and none without pending Pods', () => {
    const counts = new Map(
      Array.from({ length: 14 }, (_, index) => [
        `rule-${String(index).padStart(2, '0')}`,
        { matchedPods: 20, pendingPods: index % 13 },
      ]),
    );

    const chosen = pendingMetricRules(counts);

    expect(chosen).toHaveLength(10);
    expect(chosen[0]).toEqual(['rule-12', 12]);
    expect(chosen.map(([, pending]) => pending)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
    expect(chosen.some(([name]) => name === 'rule-00' || name === 'rule-13')).toBe(false);
  });
});
