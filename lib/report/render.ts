/** The report for people: aligned columns, and the commands that roll the pending workloads out. */
import { columns, isDns1123Label, isDns1123Subdomain, previewInput, printable as cell } from '../values/index.ts';
import type { MigrationReport, ReportWorkload } from './types.ts';

/** The report as three aligned tables (rules, workloads, totals), in the JSON's order; "-" for no change. */
function renderReportTable(report: MigrationReport): string {
  const rules = report.rules.length === 0
    ? ['no enabled rules']
    : columns(['RULE', 'ENFORCEMENT', 'MATCHED', 'CURRENT', 'PENDING'], report.rules.map((rule) => [rule.name, rule.enforcement, rule.matched, rule.current, rule.pending]));
  const workloads = report.workloads.length === 0
    ? ['no workload is matched by a rule']
    : columns(
        ['NAMESPACE', 'KIND', 'NAME', 'PODS', 'CURRENT', 'PENDING', 'DENIED', 'RULES', 'CHANGE'],
        report.workloads.map((item) => [item.namespace, item.kind, item.name, item.pods, item.current, item.pending, item.denied, item.rules.join(',') || '-', item.change || '-']),
      );
  const { totals } = report;
  const summary = columns(['PODS', 'UNAFFECTED', 'CURRENT', 'PENDING', 'DENIED'], [[totals.pods, totals.unaffected, totals.current, totals.pending, totals.denied]]);
  return [...rules, '', ...workloads, '', ...summary].join('\n');
}

function restartCommand(workload: ReportWorkload): string {
  const { kind, name, namespace, pending } = workload;
  const pods = `${pending} pending Pod${pending === 1 ? '' : 's'}`;
  if (!isDns1123Subdomain(name) || !isDns1123Label(namespace)) {
    return `# left out, not a Kubernetes name: ${cell(kind)} ${previewInput(namespace)}/${previewInput(name)} (${pods})`;
  }
  switch (kind) {
    case 'Deployment':
      return `kubectl rollout restart deployment/${name} -n ${namespace}`;
    case 'StatefulSet':
      return `kubectl rollout restart statefulset/${name} -n ${namespace}`;
    case 'Rollout':
      return `kubectl argo rollouts restart ${name} -n ${namespace}`;
    default:
      // Bare Pods, Jobs, CronJob Pods and ReplicaSets have no rollout: their Pods are recreated by hand.
      return `# recreate by hand: ${cell(kind)} ${namespace}/${name} (${pods})`;
  }
}

/**
 * For each workload with pending Pods, in the report's order, the command that rolls it out (`kubectl rollout
 * restart` for Deployments and StatefulSets, `kubectl argo rollouts restart` for Rollouts), or a `# recreate by hand`
 * comment; a shell script, so the lines that are no command are comments.
 */
function restartCommands(report: MigrationReport): string[] {
  const pending = report.workloads.filter((workload) => workload.pending > 0);
  return pending.length === 0 ? ['# no workload has pending Pods'] : pending.map(restartCommand);
}

export { renderReportTable, restartCommands };
