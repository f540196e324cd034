/** The report for people: aligned columns, and the commands that roll the pending workloads out. */
import { columns, isDns1123Label, isDns1123Subdomain, previewInput, printable as cell } from '../values/index.ts';
import type { MigrationReport, ReportWorkload } from './types.ts';

/** The report as three aligned tables (rules, workloads, totals), in the JSON's order; "-" for no change. */
function renderReportTable(report: MigrationReport): string {
  const rules =
    report.rules.length === 0
      ? ['no enabled rules']
      : columns(
          ['RULE', 'ENFORCEMENT', 'MATCHED', 'CURRENT', 'PENDING'],
          report.rules.map((rule) => [rule.name, rule.enforcement, rule.matched, rule.current, rule.pending]),
        );
  const workloads =
    report.workloads.length === 0
      ? ['no workload is matched by a rule']
      : columns(
          ['NAMESPACE', 'KIND', 'NAME', 'PODS', 'CURRENT', 'PENDING', 'DENIED', 'RULES', 'CHANGE'],
          report.workloads.map((item) => [
            item.namespace,
            item.kind,
            item.name,
            item.pods,
            item.current,
            item.pending,
            item.denied,
            item.rules.join(',') || '-',
            item.change || '-',
          ]),
        );
  const { totals } = report;
  const summary = columns(
    ['PODS', 'UNAFFECTED', 'CURRENT', 'PENDING', 'DENIED'],
    [[totals.pods, totals.unaffected, totals.current, totals.pending, totals.denied]],
  );
  return [...rules, '', ...workloads, '', ...summary].join('\n');
}

/**
 * A StatefulSet's pending Pods deleted one at a time, as its own rolling update would: each waits until the Pod the
 * StatefulSet creates again is Ready (`kubectl wait` fails until the new Pod exists, hence the loop).
 */
function deleteCommands(namespace: string, name: string, deletePods: readonly string[], pods: string): string[] {
  return [
    `# StatefulSet ${namespace}/${name}: its updateStrategy (OnDelete, or a partition) keeps rollout restart from recreating its ${pods}; deleted, each is created again`,
    ...deletePods.map(
      (pod) =>
        `kubectl delete pod ${pod} -n ${namespace} && until kubectl wait --for=condition=Ready pod/${pod} -n ${namespace} --timeout=10m; do sleep 2; done`,
    ),
  ];
}

/**
 * How a workload with pending Pods is rolled out: its controller restarted (`kubectl rollout restart`), its pending
 * Pods deleted one at a time (a StatefulSet that is OnDelete or partitioned, highest ordinal first), by hand (bare
 * Pods, Jobs, CronJobs, ReplicaSets, unknown controllers), or left out (a name that is no Kubernetes name).
 */
type RestartAction =
  | { readonly type: 'restart'; readonly kind: 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'Rollout' }
  | { readonly type: 'delete'; readonly pods: readonly string[] }
  | { readonly type: 'by-hand' }
  | { readonly type: 'left-out' };

/** The one decision of how a workload rolls out, shared by restartCommands and `podmutation rollout`. */
function restartAction(workload: ReportWorkload): RestartAction {
  const { kind, name, namespace, deletePods } = workload;
  // Pod names too: a StatefulSet's are its name and an ordinal, but a name of another form was read from the input.
  if (
    !isDns1123Subdomain(name) ||
    !isDns1123Label(namespace) ||
    (deletePods ?? []).some((pod) => !isDns1123Subdomain(pod))
  )
    return { type: 'left-out' };
  switch (kind) {
    case 'StatefulSet':
      return deletePods === undefined ? { type: 'restart', kind } : { type: 'delete', pods: deletePods };
    case 'Deployment':
    case 'DaemonSet':
    case 'Rollout':
      return { type: 'restart', kind };
    default:
      // Bare Pods, Jobs, CronJob Pods and ReplicaSets have no rollout: their Pods are recreated by hand.
      return { type: 'by-hand' };
  }
}

function restartCommand(workload: ReportWorkload): string[] {
  const { kind, name, namespace, pending } = workload;
  const pods = `${pending} pending Pod${pending === 1 ? '' : 's'}`;
  const action = restartAction(workload);
  switch (action.type) {
    case 'left-out':
      return [
        `# left out, not a Kubernetes name: ${cell(kind)} ${previewInput(namespace)}/${previewInput(name)} (${pods})`,
      ];
    case 'delete':
      return deleteCommands(namespace, name, action.pods, pods);
    case 'by-hand':
      return [`# recreate by hand: ${cell(kind)} ${namespace}/${name} (${pods})`];
    case 'restart':
      return [
        action.kind === 'Rollout'
          ? `kubectl argo rollouts restart ${name} -n ${namespace}`
          : `kubectl rollout restart ${action.kind.toLowerCase()}/${name} -n ${namespace}`,
      ];
  }
}

/**
 * For each workload with pending Pods, in the report's order, the commands that roll it out (`kubectl rollout
 * restart` for Deployments and StatefulSets, `kubectl argo rollouts restart` for Rollouts, the pending Pods deleted
 * highest ordinal first for a StatefulSet that is OnDelete or partitioned), or a `# recreate by hand` comment; a shell
 * script, so the lines that are no command are comments.
 */
function restartCommands(report: MigrationReport): string[] {
  const pending = report.workloads.filter((workload) => workload.pending > 0);
  return pending.length === 0 ? ['# no workload has pending Pods'] : pending.flatMap(restartCommand);
}

export { renderReportTable, restartAction, restartCommands };
