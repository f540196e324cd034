/** The report for people: aligned tables and the restart commands of the pending workloads. */
import { describe, expect, it } from 'vitest';
import {
  renderReportTable,
  restartCommands,
  type MigrationReport,
  type ReportWorkload,
} from '../../lib/report/index.ts';

function workload(kind: string, name: string, pending: number, namespace = 'shop'): ReportWorkload {
  return {
    namespace,
    kind,
    name,
    pods: 2,
    current: 2 - pending,
    pending,
    denied: 0,
    rules: ['move'],
    change: pending > 0 ? 'nodeSelector: +pool=b' : '',
  };
}

function report(workloads: ReportWorkload[]): MigrationReport {
  return {
    rules: [{ name: 'move', enforcement: 'enforce', matched: 4, current: 1, pending: 3 }],
    workloads,
    totals: { pods: 5, unaffected: 1, current: 1, pending: 3, denied: 0 },
  };
}

describe('renderReportTable', () => {
  it('prints rules, workloads and totals in aligned columns', () => {
    expect(renderReportTable(report([workload('Deployment', 'checkout', 2), workload('StatefulSet', 'db', 0)]))).toBe(
      [
        'RULE  ENFORCEMENT  MATCHED  CURRENT  PENDING',
        'move  enforce      4        1        3',
        '',
        'NAMESPACE  KIND         NAME      PODS  CURRENT  PENDING  DENIED  RULES  CHANGE',
        'shop       Deployment   checkout  2     0        2        0       move   nodeSelector: +pool=b',
        'shop       StatefulSet  db        2     2        0        0       move   -',
        '',
        'PODS  UNAFFECTED  CURRENT  PENDING  DENIED',
        '5     1           1        3        0',
      ].join('\n'),
    );
  });

  it('says so when no rule matches any workload', () => {
    expect(renderReportTable({ ...report([]), rules: [] })).toMatch(
      /^no enabled rules\n\nno workload is matched by a rule\n/,
    );
  });

  it('prints a control character of a name as "?", so a row stays one line', () => {
    expect(renderReportTable(report([workload('Pod', 'bad\nname', 1)]))).toContain('bad?name');
  });
});

describe('restartCommands', () => {
  it('deletes the pending Pods of a StatefulSet that rollout restart does not roll out, in the order given, each once its successor is Ready', () => {
    const db = { ...workload('StatefulSet', 'db', 2), deletePods: ['db-10', 'db-2'] };

    expect(restartCommands(report([db, workload('StatefulSet', 'cache', 1)]))).toEqual([
      '# StatefulSet shop/db: its updateStrategy (OnDelete, or a partition) keeps rollout restart from recreating its 2 pending Pods; deleted, each is created again',
      'kubectl delete pod db-10 -n shop && until kubectl wait --for=condition=Ready pod/db-10 -n shop --timeout=10m; do sleep 2; done',
      'kubectl delete pod db-2 -n shop && until kubectl wait --for=condition=Ready pod/db-2 -n shop --timeout=10m; do sleep 2; done',
      'kubectl rollout restart statefulset/cache -n shop',
    ]);
  });

  it('leaves out a StatefulSet whose Pod to delete has no Kubernetes name', () => {
    const db = { ...workload('StatefulSet', 'db', 1), deletePods: ['db-0; rm -rf ~'] };

    expect(restartCommands(report([db]))).toEqual([
      '# left out, not a Kubernetes name: StatefulSet "shop"/"db" (1 pending Pod)',
    ]);
  });

  it('rolls out Deployments and StatefulSets with kubectl rollout restart and Rollouts with the Argo plugin', () => {
    expect(
      restartCommands(
        report([
          workload('Deployment', 'checkout', 2),
          workload('StatefulSet', 'db', 1),
          workload('Rollout', 'storefront', 1),
        ]),
      ),
    ).toEqual([
      'kubectl rollout restart deployment/checkout -n shop',
      'kubectl rollout restart statefulset/db -n shop',
      'kubectl argo rollouts restart storefront -n shop',
    ]);
  });

  it('lists bare Pods, Jobs and CronJobs as recreate by hand, as shell comments', () => {
    expect(
      restartCommands(
        report([workload('Pod', 'toolbox', 1), workload('Job', 'migrate', 2), workload('CronJob', 'nightly', 1)]),
      ),
    ).toEqual([
      '# recreate by hand: Pod shop/toolbox (1 pending Pod)',
      '# recreate by hand: Job shop/migrate (2 pending Pods)',
      '# recreate by hand: CronJob shop/nightly (1 pending Pod)',
    ]);
  });

  it('leaves out workloads without pending Pods', () => {
    expect(restartCommands(report([workload('Deployment', 'checkout', 0)]))).toEqual([
      '# no workload has pending Pods',
    ]);
  });

  it('prints no command for a name that is not a Kubernetes name', () => {
    expect(restartCommands(report([workload('Deployment', 'x; rm -rf ~', 1)]))).toEqual([
      '# left out, not a Kubernetes name: Deployment "shop"/"x; rm -rf ~" (1 pending Pod)',
    ]);
  });
});
