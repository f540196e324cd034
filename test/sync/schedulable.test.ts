/**
 * The Schedulable condition on each rule's status: the sync's migration report judged against the capacity the same
 * sync publishes, through the fake API server (PodMutations, Pods) and dynalite.
 */
import { beforeEach, describe, expect, it } from 'vitest';

import { FIT_CAVEAT, readCapacityObjects, type CapacityObjects } from '../../lib/capacity/index.ts';
import { createWorkloadObjectSource } from '../../lib/cluster/index.ts';
import type { ProgressDependencies, SyncDependencies } from '../../lib/sync/index.ts';
import { nodeObject, nodePoolObject } from '../capacity/support.ts';
import { kubeconfigFor } from '../cluster/fake-api-server.ts';
import type { StatusCondition } from '../support/objects.ts';
import { invalidSpec, manualClock, syncSubject, useSyncWorld, validSpec, type ManualClock } from './support.ts';
import { ENFORCEMENT_ANNOTATION, IF_UNSCHEDULABLE_ANNOTATION } from '../../lib/api/constants.ts';

const world = useSyncWorld();

/** A bare Pod in namespace apps with no nodeSelector: it fits any untainted Node. */
function pod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'apps', uid: `uid-${name}` },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
  };
}

/** A reader of these Nodes and NodePools, as the cluster lists them. */
function reading(...objects: Record<string, unknown>[]): NonNullable<SyncDependencies['capacity']> {
  return { read: (): Promise<CapacityObjects> => Promise.resolve(readCapacityObjects(objects, 'cluster')) };
}

const LEGACY_ONLY = reading(nodeObject('legacy-1', { 'example.com/pool': 'legacy' }));
const WITH_GENERAL = reading(
  nodeObject('legacy-1', { 'example.com/pool': 'legacy' }),
  nodePoolObject('general', {}, { labels: { 'example.com/pool': 'general' } }),
);

function progress(clusterId: string, metrics: { rule: string; count: number }[] = []): ProgressDependencies {
  return {
    objects: createWorkloadObjectSource({ mode: 'kubeconfigText', text: kubeconfigFor(world.server) }, { pageSize: 2 }),
    intervalMinutes: 1,
    records: world.records(clusterId),
    unschedulablePodsMetric: (rule, count) => metrics.push({ rule, count }),
  };
}

function conditionsOf(name: string): readonly StatusCondition[] {
  const status = (world.server.get(name)?.['status'] ?? {}) as { conditions?: StatusCondition[] };
  return status.conditions ?? [];
}

function condition(name: string, type: string): StatusCondition | undefined {
  return conditionsOf(name).find((entry) => entry.type === type);
}

/** A subject syncing with the migration report every minute, on a clock the test moves. */
function reportingSubject(clock: ManualClock, metrics?: { rule: string; count: number }[]) {
  return syncSubject(world, (clusterId) => ({ clock, progress: progress(clusterId, metrics) }));
}

beforeEach(() => {
  world.server.clearObjects();
  world.server.putObjects([pod('checkout-1'), pod('checkout-2')]);
});

describe('the Schedulable condition', () => {
  it('is False, naming how many Pods and one of them with the verdict, when the rule sends Pods where nothing takes them', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    const subject = reportingSubject(manualClock());

    const report = await subject.sync({ capacity: LEGACY_ONLY });

    expect(report.progress).toMatchObject({ unschedulableRules: 1, statusFailed: 0 });
    const schedulable = condition('move-to-general', 'Schedulable');
    expect(schedulable).toMatchObject({ status: 'False', reason: 'PodsWouldFitNowhere', observedGeneration: 1 });
    expect(schedulable?.message).toMatch(
      /^2 Pods the rule matches would go from fitting somewhere to fitting nowhere once recreated with it, e\.g\. Pod apps\/checkout-[12]: fits nowhere: /,
    );
    expect(schedulable?.message).toContain('example.com/pool');
    expect(schedulable?.message).toContain(FIT_CAVEAT);
  });

  it('is True when a NodePool takes the Pods the rule changes', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    const subject = reportingSubject(manualClock());

    const report = await subject.sync({ capacity: WITH_GENERAL });

    expect(report.progress).toMatchObject({ unschedulableRules: 0 });
    expect(condition('move-to-general', 'Schedulable')).toMatchObject({ status: 'True', reason: 'PodsFit' });
  });

  it('is Unknown when the sync could not read the capacity, since only contradictions were looked for', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    const subject = reportingSubject(manualClock());

    await subject.sync({ capacity: { read: () => Promise.reject(new Error('nodes is forbidden')) } });

    expect(condition('move-to-general', 'Schedulable')).toMatchObject({
      status: 'Unknown',
      reason: 'CapacityUnknown',
    });
  });

  it('is Unknown for an audited rule, which changes no Pod', async () => {
    world.server.put({
      metadata: { name: 'move-to-general', annotations: { [ENFORCEMENT_ANNOTATION]: 'audit' } },
      spec: validSpec('general'),
    });
    const subject = reportingSubject(manualClock());

    await subject.sync({ capacity: LEGACY_ONLY });

    expect(condition('move-to-general', 'Schedulable')).toMatchObject({ status: 'Unknown', reason: 'Audited' });
  });

  it('is False for a rule annotated if-unschedulable: skip too, saying that admission holds it back', async () => {
    world.server.put({
      metadata: { name: 'move-to-general', annotations: { [IF_UNSCHEDULABLE_ANNOTATION]: 'skip' } },
      spec: validSpec('general'),
    });
    const subject = reportingSubject(manualClock());

    await subject.sync({ capacity: LEGACY_ONLY });

    const schedulable = condition('move-to-general', 'Schedulable');
    expect(schedulable).toMatchObject({ status: 'False', reason: 'PodsWouldFitNowhere' });
    expect(schedulable?.message).toMatch(/^2 Pods .* so admission holds it back from them \(if-unschedulable: skip\)/);
  });

  it('sits beside the Accepted condition the same sync wrote, which the progress write keeps', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    const subject = reportingSubject(manualClock());

    await subject.sync({ capacity: LEGACY_ONLY });

    expect(conditionsOf('move-to-general').map((entry) => `${entry.type}=${entry.status}`)).toEqual([
      'Accepted=True',
      'Schedulable=False',
    ]);
  });

  it('turns True once the target exists, moving lastTransitionTime, and is not written again while nothing changes', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    const clock = manualClock(Date.parse('2026-12-01T10:00:00.000Z'));
    const subject = reportingSubject(clock);
    await subject.sync({ capacity: LEGACY_ONLY });

    clock.advance(60_000);
    await subject.sync({ capacity: WITH_GENERAL });
    clock.advance(60_000);
    const unchanged = await subject.sync({ capacity: WITH_GENERAL });

    expect(condition('move-to-general', 'Schedulable')).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-12-01T10:01:00.000Z',
    });
    expect(unchanged.progress).toMatchObject({ statusPatched: 0 });
  });

  it('is removed, with the counts, once the rule turns invalid', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    const clock = manualClock();
    const subject = reportingSubject(clock);
    await subject.sync({ capacity: LEGACY_ONLY });

    world.server.put({ metadata: { name: 'move-to-general' }, spec: invalidSpec() });
    clock.advance(60_000);
    await subject.sync({ capacity: LEGACY_ONLY });

    expect(conditionsOf('move-to-general').map((entry) => `${entry.type}=${entry.status}`)).toEqual(['Accepted=False']);
  });

  it('is removed once the rule is disabled, since it then changes no Pod', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    const clock = manualClock();
    const subject = reportingSubject(clock);
    await subject.sync({ capacity: LEGACY_ONLY });

    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general', { enable: false }) });
    clock.advance(60_000);
    await subject.sync({ capacity: LEGACY_ONLY });

    expect(condition('move-to-general', 'Schedulable')).toBeUndefined();
    expect(condition('move-to-general', 'Accepted')).toMatchObject({ status: 'True', observedGeneration: 2 });
  });

  it('emits UnschedulablePods for the rules that strand Pods, and UnschedulableRules for all', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    world.server.put({
      metadata: { name: 'move-to-legacy' },
      spec: validSpec('legacy', { workloadSelector: { namespaces: ['web'] } }),
    });
    world.server.putObjects([{ ...pod('web-1'), metadata: { name: 'web-1', namespace: 'web', uid: 'uid-web-1' } }]);
    const emitted: { rule: string; count: number }[] = [];
    const subject = reportingSubject(manualClock(), emitted);

    await subject.sync({ capacity: LEGACY_ONLY });

    expect(emitted).toEqual([{ rule: 'move-to-general', count: 2 }]);
    expect(subject.recorder.emitted).toContainEqual({ name: 'UnschedulableRules', unit: 'Count', value: 1 });
    expect(condition('move-to-legacy', 'Schedulable')).toMatchObject({ status: 'True' });
  });
});

describe('the Schedulable condition while the migration report is off', () => {
  /** A subject syncing without the migration report: its status step judges what each rule adds. */
  const plainSubject = (clock = manualClock()) => syncSubject(world, () => ({ clock }));

  it('is False when what the rule adds fits no Node and no NodePool, with no Pod listed', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });

    await plainSubject().sync({ capacity: LEGACY_ONLY });

    const schedulable = condition('move-to-general', 'Schedulable');
    expect(schedulable).toMatchObject({ status: 'False', reason: 'AdditionsFitNowhere', observedGeneration: 1 });
    expect(schedulable?.message).toMatch(
      /^by node labels, what the rule adds fits nowhere: no Node and no NodePool takes it; closest: Node legacy-1: /,
    );
    expect(schedulable?.message).toContain(FIT_CAVEAT);
  });

  it('emits UnschedulableRules, the rules whose condition is False, which the alarm reads', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    world.server.put({ metadata: { name: 'move-to-legacy' }, spec: validSpec('legacy') });
    const subject = plainSubject();

    await subject.sync({ capacity: LEGACY_ONLY });

    expect(subject.recorder.emitted).toContainEqual({ name: 'UnschedulableRules', unit: 'Count', value: 1 });
  });

  it('is Unknown when the additions fit, since the Pods the rule matches are not judged without the report', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });

    await plainSubject().sync({ capacity: WITH_GENERAL });

    expect(condition('move-to-general', 'Schedulable')).toMatchObject({ status: 'Unknown', reason: 'PodsNotJudged' });
  });

  it('is Unknown when the capacity could not be read, and for an audited rule', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    world.server.put({
      metadata: { name: 'audited', annotations: { [ENFORCEMENT_ANNOTATION]: 'audit' } },
      spec: validSpec('general'),
    });

    await plainSubject().sync({ capacity: { read: () => Promise.reject(new Error('nodes is forbidden')) } });

    expect(condition('move-to-general', 'Schedulable')).toMatchObject({ status: 'Unknown', reason: 'CapacityUnknown' });
    expect(condition('audited', 'Schedulable')).toMatchObject({ status: 'Unknown', reason: 'Audited' });
  });

  it('turns from False to Unknown once a NodePool defines the target, and is not written again while nothing changes', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    const clock = manualClock(Date.parse('2026-12-01T10:00:00.000Z'));
    const subject = plainSubject(clock);
    await subject.sync({ capacity: LEGACY_ONLY });

    clock.advance(60_000);
    await subject.sync({ capacity: WITH_GENERAL });
    clock.advance(60_000);
    const unchanged = await subject.sync({ capacity: WITH_GENERAL });

    expect(condition('move-to-general', 'Schedulable')).toMatchObject({
      status: 'Unknown',
      lastTransitionTime: '2026-12-01T10:01:00.000Z',
    });
    expect(unchanged).toMatchObject({ statusPatched: 0 });
  });

  it('is removed once the rule is disabled, keeping its Accepted condition', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });
    const clock = manualClock();
    const subject = plainSubject(clock);
    await subject.sync({ capacity: LEGACY_ONLY });

    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general', { enable: false }) });
    clock.advance(60_000);
    await subject.sync({ capacity: LEGACY_ONLY });

    expect(conditionsOf('move-to-general').map((entry) => `${entry.type}=${entry.status}`)).toEqual(['Accepted=True']);
  });

  it('is not written by a sync that reads no capacity at all', async () => {
    world.server.put({ metadata: { name: 'move-to-general' }, spec: validSpec('general') });

    await plainSubject().sync({});

    expect(condition('move-to-general', 'Schedulable')).toBeUndefined();
  });
});
