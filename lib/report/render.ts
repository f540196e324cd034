/** The report for people: aligned columns, and the commands that roll the pending workloads out. */
import { previewInput } from '../json/index.ts';
import { isDns1123Label, isDns1123Subdomain } from '../syntax/index.ts';
import { columns, printable as cell } from '../text/index.ts';
import type { MigrationReport, ReportPod, ReportWorkload } from './types.ts';

/** The report as three aligned tables (rules, workloads, totals), in the JSON's order; "-" for no change or no fit judged. */
function renderReportTable(report: MigrationReport): string {
  const rules =
    report.rules.length === 0
      ? ['no enabled rules']
      : columns(
          ['RULE', 'ENFORCEMENT', 'MATCHED', 'CURRENT', 'PENDING', 'UNSCHEDULABLE'],
          report.rules.map((rule) => [
            rule.name,
            rule.enforcement,
            rule.matched,
            rule.current,
            rule.pending,
            rule.unschedulable,
          ]),
        );
  const workloads =
    report.workloads.length === 0
      ? ['no workload is matched by a rule']
      : columns(
          ['NAMESPACE', 'KIND', 'NAME', 'PODS', 'CURRENT', 'PENDING', 'DENIED', 'RULES', 'CHANGE', 'FITS'],
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
            item.fit?.reason ?? '-',
          ]),
        );
  const { totals } = report;
  const summary = columns(
    ['PODS', 'UNAFFECTED', 'CURRENT', 'PENDING', 'DENIED'],
    [[totals.pods, totals.unaffected, totals.current, totals.pending, totals.denied]],
  );
  return [...rules, '', ...workloads, '', ...summary].join('\n');
}

/** The annotation `kubectl rollout restart` sets on the pod template (kubectl pkg/polymorphichelpers/objectrestarter.go). */
const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

/**
 * How a restart is asked of a workload's controller: the pod template annotation `kubectl rollout restart` sets
 * (Deployment, StatefulSet, DaemonSet), or, for every Argo Rollout, spec.restartAt, which `kubectl argo rollouts
 * restart` sets and Argo's controller acts on by evicting each older Pod (argoproj/argo-rollouts rollout/restart.go,
 * pkg/kubectl-argo-rollouts/cmd/restart/restart.go); Argo refuses a template on a workloadRef Rollout, so a template
 * annotation is never sent to one.
 */
type RestartMechanism = 'template-annotation' | 'restart-at';

/**
 * How a workload with pending Pods is rolled out: its controller restarted by its mechanism, its pending Pods evicted
 * one at a time (a StatefulSet that is OnDelete or partitioned, highest ordinal first, each preconditioned on the uid
 * the report read), held (such a StatefulSet whose Pods must not be deleted, and why), by hand (bare Pods, Jobs,
 * CronJobs, ReplicaSets, unknown controllers), or left out (a name or uid that is no Kubernetes one).
 */
type RestartAction =
  | {
      readonly type: 'restart';
      readonly kind: 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'Rollout';
      readonly mechanism: RestartMechanism;
    }
  | { readonly type: 'delete'; readonly pods: readonly ReportPod[] }
  | { readonly type: 'held'; readonly reason: string }
  | { readonly type: 'unschedulable'; readonly reason: string }
  | { readonly type: 'by-hand' }
  | { readonly type: 'left-out' };

// What the API server generates is a UUID; anything else read from a file goes nowhere near a shell.
const UID = /^[0-9A-Za-z-]{1,128}$/;

/** What may be rolled out: with `allowUnschedulable`, also a workload whose recreated Pods would fit nowhere. */
interface RestartOptions {
  readonly allowUnschedulable?: boolean;
}

/**
 * The one decision of how a workload rolls out, shared by restartCommands and `podmutation rollout`. A workload whose
 * recreated Pods would fit nowhere (ReportWorkload.fit) is not restarted unless `allowUnschedulable`: its Pods would
 * stay Pending, and a rolling update would stall on them.
 */
function restartAction(workload: ReportWorkload, options: RestartOptions = {}): RestartAction {
  const { kind, name, namespace, deletePods, held, fit } = workload;
  // Pod names and uids too: a StatefulSet's are its name and an ordinal, but a name of another form was read from the input.
  if (
    !isDns1123Subdomain(name) ||
    !isDns1123Label(namespace) ||
    (deletePods ?? []).some((pod) => !isDns1123Subdomain(pod.name) || !UID.test(pod.uid))
  )
    return { type: 'left-out' };
  if (fit?.kind === 'nowhere' && options.allowUnschedulable !== true)
    return { type: 'unschedulable', reason: fit.reason };
  if (held !== undefined) return { type: 'held', reason: held };
  switch (kind) {
    case 'StatefulSet':
      return deletePods === undefined
        ? { type: 'restart', kind, mechanism: 'template-annotation' }
        : { type: 'delete', pods: deletePods };
    case 'Deployment':
    case 'DaemonSet':
      return { type: 'restart', kind, mechanism: 'template-annotation' };
    case 'Rollout':
      return { type: 'restart', kind, mechanism: 'restart-at' };
    default:
      // Bare Pods, Jobs, CronJob Pods and ReplicaSets have no rollout: their Pods are recreated by hand.
      return { type: 'by-hand' };
  }
}

/** The patch that asks for a restart at `at` (RFC 3339) by `mechanism`: what `rollout` sends, and the field the printed commands set. */
function restartPatch(mechanism: RestartMechanism, at: string): Record<string, unknown> {
  return mechanism === 'restart-at'
    ? { spec: { restartAt: at } }
    : { spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: at } } } } };
}

/** The eviction of a Pod (policy/v1), deleted only if its uid is still `uid`: the body `rollout` posts and the script echoes. */
function evictionOf(namespace: string, pod: ReportPod): Record<string, unknown> {
  return {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: pod.name, namespace },
    deleteOptions: { preconditions: { uid: pod.uid } },
  };
}

/**
 * A StatefulSet's pending Pods evicted one at a time, as its own rolling update would: `kubectl create --raw` posts the
 * eviction with the uid precondition (kubectl delete takes none), which the API server refuses while a
 * PodDisruptionBudget allows no disruption, and for a Pod recreated since the report; the script then stops. Each
 * waits until the Pod the StatefulSet creates again (another uid) is Ready.
 */
function evictCommands(namespace: string, name: string, deletePods: readonly ReportPod[], pods: string): string[] {
  return [
    `# StatefulSet ${namespace}/${name}: its updateStrategy (OnDelete, or a partition) keeps rollout restart from recreating its ${pods}; each is evicted in turn if its uid is still the one the report read, and comes back at the revision it runs; the API server refuses an eviction a PodDisruptionBudget does not allow, and the script then stops`,
    ...deletePods.flatMap((pod) => [
      `echo '${JSON.stringify(evictionOf(namespace, pod))}' | kubectl create --raw /api/v1/namespaces/${namespace}/pods/${pod.name}/eviction -f - >/dev/null || exit 1`,
      `until s=$(kubectl get pod ${pod.name} -n ${namespace} -o 'jsonpath={.metadata.uid}/{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) && [ "\${s%/*}" != ${pod.uid} ] && [ "\${s#*/}" = True ]; do sleep 2; done`,
    ]),
  ];
}

/** The command that restarts a workload by `mechanism`, setting the field restartPatch sets. */
function restartCommand(kind: string, namespace: string, name: string, mechanism: RestartMechanism): string {
  if (mechanism === 'template-annotation')
    return `kubectl rollout restart ${kind.toLowerCase()}/${name} -n ${namespace}`;
  // What `kubectl argo rollouts restart` sends, with plain kubectl: the time is the shell's, in UTC, when it runs.
  const patch = JSON.stringify(restartPatch(mechanism, '$(date -u +%Y-%m-%dT%H:%M:%SZ)')).replace(/"/g, '\\"');
  return `kubectl patch rollouts.argoproj.io/${name} -n ${namespace} --type merge -p "${patch}"`;
}

function commandsOf(workload: ReportWorkload, options: RestartOptions): string[] {
  const { kind, name, namespace, pending } = workload;
  const pods = `${pending} pending Pod${pending === 1 ? '' : 's'}`;
  const action = restartAction(workload, options);
  switch (action.type) {
    case 'left-out':
      return [
        `# left out, not a Kubernetes name or uid: ${cell(kind)} ${previewInput(namespace)}/${previewInput(name)} (${pods})`,
      ];
    case 'held':
      return [`# held: ${cell(kind)} ${namespace}/${name} (${pods}): ${cell(action.reason)}`];
    case 'unschedulable':
      return [
        `# unschedulable, not restarted (--allow-unschedulable restarts it): ${cell(kind)} ${namespace}/${name} (${pods}): ${cell(action.reason)}`,
      ];
    case 'delete':
      return evictCommands(namespace, name, action.pods, pods);
    case 'by-hand':
      return [`# recreate by hand: ${cell(kind)} ${namespace}/${name} (${pods})`];
    case 'restart':
      return [restartCommand(action.kind, namespace, name, action.mechanism)];
  }
}

/**
 * For each workload with pending Pods, in the report's order, the commands that roll it out (`kubectl rollout
 * restart` for Deployments and StatefulSets, Argo's spec.restartAt for Rollouts, the pending Pods evicted highest
 * ordinal first for a StatefulSet that is OnDelete or partitioned), or a `# held: …`, `# unschedulable, …` or
 * `# recreate by hand: …` comment; a shell script, so the lines that are no command are comments.
 */
function restartCommands(report: MigrationReport, options: RestartOptions = {}): string[] {
  const pending = report.workloads.filter((workload) => workload.pending > 0);
  return pending.length === 0
    ? ['# no workload has pending Pods']
    : pending.flatMap((workload) => commandsOf(workload, options));
}

export { evictionOf, renderReportTable, restartAction, restartCommands, restartPatch };
export type { RestartMechanism };
