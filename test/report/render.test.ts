/** The report for people: aligned tables and the restart commands of the pending workloads. */
import { describe, expect, it } from 'vitest';
import {
  renderReportTable,
  restartAction,
  restartCommands,
  restartPatch,
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
    rules: [{ name: 'move', enforcement: 'enforce', matched: 4, current: 1, pending: 3, unschedulable: 0 }],
    workloads,
    totals: { pods: 5, unaffected: 1, current: 1, pending: 3, denied: 0 },
  };
}

describe('renderReportTable', () => {
  it('prints rules, workloads and totals in aligned columns', () => {
    const checkout = {
      ...workload('Deployment', 'checkout', 2),
      fit: { kind: 'fits', reason: 'fits 3 Nodes' },
    } as const;
    expect(renderReportTable(report([checkout, workload('StatefulSet', 'db', 0)]))).toBe(
      [
        'RULE  ENFORCEMENT  MATCHED  CURRENT  PENDING  UNSCHEDULABLE',
        'move  enforce      4        1        3        0',
        '',
        'NAMESPACE  KIND         NAME      PODS  CURRENT  PENDING  DENIED  RULES  CHANGE                 FITS',
        'shop       Deployment   checkout  2     0        2        0       move   nodeSelector: +pool=b  fits 3 Nodes',
        'shop       StatefulSet  db        2     2        0        0       move   -                      -',
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
  it('evicts the pending Pods of a StatefulSet that rollout restart does not roll out, in the order given, each preconditioned on its uid and once its successor is Ready', () => {
    const db = {
      ...workload('StatefulSet', 'db', 2),
      deletePods: [
        { name: 'db-10', uid: 'aaaa-10' },
        { name: 'db-2', uid: 'aaaa-2' },
      ],
    };

    expect(restartCommands(report([db, workload('StatefulSet', 'cache', 1)]))).toEqual([
      '# StatefulSet shop/db: its updateStrategy (OnDelete, or a partition) keeps rollout restart from recreating its 2 pending Pods; each is evicted in turn if its uid is still the one the report read, and comes back at the revision it runs; the API server refuses an eviction a PodDisruptionBudget does not allow, and the script then stops',
      `echo '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"db-10","namespace":"shop"},"deleteOptions":{"preconditions":{"uid":"aaaa-10"}}}' | kubectl create --raw /api/v1/namespaces/shop/pods/db-10/eviction -f - >/dev/null || exit 1`,
      `until s=$(kubectl get pod db-10 -n shop -o 'jsonpath={.metadata.uid}/{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) && [ "\${s%/*}" != aaaa-10 ] && [ "\${s#*/}" = True ]; do sleep 2; done`,
      `echo '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"db-2","namespace":"shop"},"deleteOptions":{"preconditions":{"uid":"aaaa-2"}}}' | kubectl create --raw /api/v1/namespaces/shop/pods/db-2/eviction -f - >/dev/null || exit 1`,
      `until s=$(kubectl get pod db-2 -n shop -o 'jsonpath={.metadata.uid}/{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) && [ "\${s%/*}" != aaaa-2 ] && [ "\${s#*/}" = True ]; do sleep 2; done`,
      'kubectl rollout restart statefulset/cache -n shop',
    ]);
  });

  it.each([
    ['a Pod to delete has no Kubernetes name', { name: 'db-0; rm -rf ~', uid: 'aaaa' }],
    ['a uid is no Kubernetes uid', { name: 'db-0', uid: "x'; rm -rf ~; '" }],
  ])('leaves out a StatefulSet where %s', (_case, pod) => {
    const db = { ...workload('StatefulSet', 'db', 1), deletePods: [pod] };

    expect(restartCommands(report([db]))).toEqual([
      '# left out, not a Kubernetes name or uid: StatefulSet "shop"/"db" (1 pending Pod)',
    ]);
  });

  it('prints a held StatefulSet as a comment with the reason, its control characters made printable', () => {
    const db = { ...workload('StatefulSet', 'db', 2), held: 'its template is staged: update revision db-b\nrm -rf ~' };

    expect(restartCommands(report([db]))).toEqual([
      '# held: StatefulSet shop/db (2 pending Pods): its template is staged: update revision db-b?rm -rf ~',
    ]);
  });

  it('rolls out Deployments and StatefulSets with kubectl rollout restart and Rollouts with spec.restartAt, as the Argo plugin sets it', () => {
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
      'kubectl patch rollouts.argoproj.io/storefront -n shop --type merge -p "{\\"spec\\":{\\"restartAt\\":\\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\\"}}"',
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

  const NOWHERE = { kind: 'nowhere', reason: 'fits nowhere: no Node and no NodePool takes it' } as const;

  it('prints a comment, no command, for a workload whose recreated Pods would fit nowhere', () => {
    expect(restartCommands(report([{ ...workload('Deployment', 'checkout', 2), fit: NOWHERE }]))).toEqual([
      '# unschedulable, not restarted (--allow-unschedulable restarts it): Deployment shop/checkout (2 pending Pods): fits nowhere: no Node and no NodePool takes it',
    ]);
  });

  it('prints its command with allowUnschedulable', () => {
    const checkout = { ...workload('Deployment', 'checkout', 2), fit: NOWHERE };
    expect(restartCommands(report([checkout]), { allowUnschedulable: true })).toEqual([
      'kubectl rollout restart deployment/checkout -n shop',
    ]);
  });

  it('prints no command for a name that is not a Kubernetes name', () => {
    expect(restartCommands(report([workload('Deployment', 'x; rm -rf ~', 1)]))).toEqual([
      '# left out, not a Kubernetes name or uid: Deployment "shop"/"x; rm -rf ~" (1 pending Pod)',
    ]);
  });
});

describe('restartAction', () => {
  it.each([
    ['Deployment', 'template-annotation'],
    ['StatefulSet', 'template-annotation'],
    ['DaemonSet', 'template-annotation'],
    ['Rollout', 'restart-at'],
  ])('restarts a %s by its %s, the one mechanism rollout and the script share', (kind, mechanism) => {
    expect(restartAction(workload(kind, 'app', 1))).toEqual({ type: 'restart', kind, mechanism });
  });

  it('holds a StatefulSet the report holds, whatever Pods it lists', () => {
    const db = { ...workload('StatefulSet', 'db', 1), held: 'staged' };

    expect(restartAction(db)).toEqual({ type: 'held', reason: 'staged' });
  });
});

describe('restartPatch', () => {
  it('sets the pod template annotation kubectl rollout restart sets', () => {
    expect(restartPatch('template-annotation', '2026-12-04T10:00:00Z')).toEqual({
      spec: {
        template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-12-04T10:00:00Z' } } },
      },
    });
  });

  it('sets Argo’s spec.restartAt and no template, which a workloadRef Rollout must not carry', () => {
    expect(restartPatch('restart-at', '2026-12-04T10:00:00Z')).toEqual({ spec: { restartAt: '2026-12-04T10:00:00Z' } });
  });
});
