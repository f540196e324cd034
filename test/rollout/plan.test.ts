import { describe, expect, it } from 'vitest';
import type { MigrationReport, ReportWorkload } from '../../lib/report/index.ts';
import { planRollout } from '../../lib/rollout/index.ts';

function workload(kind: string, name: string, counts: Partial<ReportWorkload> = {}): ReportWorkload {
  return {
    namespace: 'production',
    kind,
    name,
    pods: 2,
    current: 0,
    pending: 2,
    denied: 0,
    rules: ['r'],
    change: `change of ${name}`,
    ...counts,
  };
}

function report(...workloads: ReportWorkload[]): MigrationReport {
  return { rules: [], workloads, totals: { pods: 0, unaffected: 0, current: 0, pending: 0, denied: 0 } };
}

describe('planRollout', () => {
  const PODS = [
    { name: 'db-1', uid: 'u-1' },
    { name: 'db-0', uid: 'u-0' },
  ];

  it.each([
    { kind: 'Deployment', extra: {}, planned: { method: 'restart', mechanism: 'template-annotation', pods: [] } },
    { kind: 'StatefulSet', extra: {}, planned: { method: 'restart', mechanism: 'template-annotation', pods: [] } },
    { kind: 'DaemonSet', extra: {}, planned: { method: 'restart', mechanism: 'template-annotation', pods: [] } },
    { kind: 'Rollout', extra: {}, planned: { method: 'restart', mechanism: 'restart-at', pods: [] } },
    { kind: 'StatefulSet', extra: { deletePods: PODS }, planned: { method: 'evict-pods', pods: PODS } },
  ])('rolls out a pending $kind $extra by $planned.method', ({ kind, extra, planned }) => {
    const plan = planRollout(report(workload(kind, 'db', extra)), 1);

    expect(plan.waves).toEqual([[{ namespace: 'production', kind, name: 'db', change: 'change of db', ...planned }]]);
    expect(plan.leftAlone).toEqual([]);
  });

  const NOWHERE = { kind: 'nowhere', reason: 'fits nowhere: no Node and no NodePool takes it' } as const;

  it.each([
    { kind: 'Deployment', extra: {} },
    { kind: 'StatefulSet', extra: { deletePods: PODS } },
    { kind: 'StatefulSet', extra: { held: 'its template is staged' } },
    { kind: 'Job', extra: {} },
  ])('leaves a pending $kind $extra alone as unschedulable when its Pods would fit nowhere', ({ kind, extra }) => {
    const plan = planRollout(report(workload(kind, 'db', { ...extra, fit: NOWHERE })), 1);

    expect(plan.waves).toEqual([]);
    expect(plan.leftAlone.map(({ workload: { name }, state, reason }) => ({ name, state, reason }))).toEqual([
      { name: 'db', state: 'unschedulable', reason: NOWHERE.reason },
    ]);
  });

  it('rolls out a workload whose Pods would fit nowhere with allowUnschedulable', () => {
    const plan = planRollout(report(workload('Deployment', 'db', { fit: NOWHERE })), 1, { allowUnschedulable: true });

    expect(plan.waves.flat().map(({ name, method }) => ({ name, method }))).toEqual([
      { name: 'db', method: 'restart' },
    ]);
    expect(plan.leftAlone).toEqual([]);
  });

  it.each([
    { kind: 'fits', reason: 'fits NodePool merged; 0 Nodes' },
    { kind: 'unknown', reason: 'not judged: no capacity given' },
  ] as const)('rolls out a workload whose Pods fit ($kind)', (fit) => {
    const plan = planRollout(report(workload('Deployment', 'db', { fit })), 1);

    expect(plan.waves.flat().map(({ name }) => name)).toEqual(['db']);
  });

  it('leaves a current workload current, though its Pods would fit nowhere: nothing restarts it', () => {
    const plan = planRollout(report(workload('Deployment', 'db', { pending: 0, current: 2, fit: NOWHERE })), 1);

    expect(plan.leftAlone.map(({ state }) => state)).toEqual(['current']);
  });

  it('leaves a held StatefulSet alone, with the report’s reason', () => {
    const plan = planRollout(report(workload('StatefulSet', 'db', { held: 'its template is staged' })), 1);

    expect(plan.waves).toEqual([]);
    expect(plan.leftAlone.map(({ workload: { name }, state, reason }) => ({ name, state, reason }))).toEqual([
      { name: 'db', state: 'held', reason: 'its template is staged' },
    ]);
  });

  it.each(['Pod', 'Job', 'CronJob', 'ReplicaSet', 'example.com/Custom'])(
    'lists a pending %s to recreate by hand, in no wave',
    (kind) => {
      const plan = planRollout(report(workload(kind, 'thing')), 1);

      expect(plan.waves).toEqual([]);
      expect(plan.leftAlone.map(({ workload: { kind: listed }, state }) => [listed, state])).toEqual([
        [kind, 'by-hand'],
      ]);
    },
  );

  it('skips a current workload, so that a second run resumes, and leaves a denied one alone', () => {
    const plan = planRollout(
      report(
        workload('Deployment', 'done', { pending: 0, current: 2 }),
        workload('Deployment', 'refused', { pending: 1, denied: 1 }),
      ),
      1,
    );

    expect(plan.waves).toEqual([]);
    expect(plan.leftAlone.map(({ workload: { name }, state }) => [name, state])).toEqual([
      ['done', 'current'],
      ['refused', 'denied'],
    ]);
  });

  it('groups the pending workloads into waves of --max-concurrent in the report order', () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    const plan = planRollout(report(...names.map((name) => workload('Deployment', name))), 2);

    expect(plan.waves.map((wave) => wave.map(({ name }) => name))).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('leaves out a workload whose name is no Kubernetes name, as restartCommands does', () => {
    const plan = planRollout(report(workload('Deployment', 'Not_A_Name')), 1);

    expect(plan.waves).toEqual([]);
    expect(plan.leftAlone.map(({ state }) => state)).toEqual(['by-hand']);
  });

  it.each([0, -1, 1.5])('refuses a max-concurrent of %s', (size) => {
    expect(() => planRollout(report(), size)).toThrow(RangeError);
  });
});
