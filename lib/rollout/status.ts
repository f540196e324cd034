/**
 * Pure: a workload's rollout read from its status as `kubectl rollout status` reads it
 * (kubernetes/kubectl pkg/polymorphichelpers/rollout_status.go), and the readiness of a Pod; untrusted JSON read
 * with field paths in errors.
 */
import type { RolloutWorkloadKind } from '../cluster/index.ts';
import {
  isJsonObject,
  objectList,
  optionalInteger,
  optionalObject,
  optionalString,
  stringMap,
  typeMismatch,
  type JsonObject,
} from '../json/index.ts';

/** Where a workload's rollout stands: done, still progressing (and on what), or failed (and why). */
type Progress =
  | { readonly state: 'done' }
  | { readonly state: 'progressing'; readonly detail: string }
  | { readonly state: 'failed'; readonly reason: string };

/**
 * What a rollout needs of a workload: its pod template's labels (for the disruption budgets; a workloadRef Rollout's
 * are its referenced workload's), its update strategy, and a Rollout's spec.workloadRef.
 */
interface WorkloadShape {
  readonly generation: number;
  readonly templateLabels: Readonly<Record<string, string>>;
  readonly updateStrategy: string;
  readonly workloadRef: { readonly kind: string; readonly name: string } | undefined;
}

function objectAt(value: unknown, path: string): JsonObject {
  if (!isJsonObject(value)) throw typeMismatch(path, 'an object', value);
  return value;
}

function count(value: unknown, path: string): number {
  return optionalInteger(value, path) ?? 0;
}

/** The workload's generation, template labels, update strategy type and (a Rollout's) workloadRef. */
function readWorkloadShape(kind: RolloutWorkloadKind, value: unknown, path: string): WorkloadShape {
  const object = objectAt(value, path);
  const metadata = optionalObject(object.metadata, `${path}.metadata`);
  const spec = optionalObject(object.spec, `${path}.spec`);
  const template = optionalObject(spec?.template, `${path}.spec.template`);
  const templateMetadata = optionalObject(template?.metadata, `${path}.spec.template.metadata`);
  const strategyField = kind === 'Deployment' || kind === 'Rollout' ? 'strategy' : 'updateStrategy';
  const strategy = optionalObject(spec?.[strategyField], `${path}.spec.${strategyField}`);
  const reference = kind === 'Rollout' ? optionalObject(spec?.workloadRef, `${path}.spec.workloadRef`) : undefined;
  return {
    generation: count(metadata?.generation, `${path}.metadata.generation`),
    templateLabels: stringMap(templateMetadata?.labels, `${path}.spec.template.metadata.labels`),
    // The API server defaults both StatefulSet and DaemonSet strategies to RollingUpdate.
    updateStrategy: optionalString(strategy?.type, `${path}.spec.${strategyField}.type`) || 'RollingUpdate',
    workloadRef:
      reference === undefined
        ? undefined
        : {
            kind: optionalString(reference.kind, `${path}.spec.workloadRef.kind`),
            name: optionalString(reference.name, `${path}.spec.workloadRef.name`),
          },
  };
}

function deploymentProgress(spec: JsonObject | undefined, status: JsonObject | undefined, path: string): Progress {
  const conditions = objectList(status?.conditions, `${path}.status.conditions`);
  const progressing = conditions.find((condition) => condition.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return {
      state: 'failed',
      reason: `progress deadline exceeded: ${optionalString(progressing.message, `${path}.status.conditions.message`) || 'ProgressDeadlineExceeded'}`,
    };
  }
  const replicas = optionalInteger(spec?.replicas, `${path}.spec.replicas`) ?? 1;
  const updated = count(status?.updatedReplicas, `${path}.status.updatedReplicas`);
  const total = count(status?.replicas, `${path}.status.replicas`);
  const available = count(status?.availableReplicas, `${path}.status.availableReplicas`);
  if (updated < replicas) return { state: 'progressing', detail: `${updated} of ${replicas} new replicas updated` };
  if (total > updated) return { state: 'progressing', detail: `${total - updated} old replicas pending termination` };
  if (available < updated)
    return { state: 'progressing', detail: `${available} of ${updated} updated replicas available` };
  return { state: 'done' };
}

function statefulSetProgress(spec: JsonObject | undefined, status: JsonObject | undefined, path: string): Progress {
  const replicas = optionalInteger(spec?.replicas, `${path}.spec.replicas`) ?? 1;
  const ready = count(status?.readyReplicas, `${path}.status.readyReplicas`);
  const updated = count(status?.updatedReplicas, `${path}.status.updatedReplicas`);
  if (ready < replicas) return { state: 'progressing', detail: `${ready} of ${replicas} Pods ready` };
  const update = optionalString(status?.updateRevision, `${path}.status.updateRevision`);
  const current = optionalString(status?.currentRevision, `${path}.status.currentRevision`);
  if (update !== current)
    return { state: 'progressing', detail: `${updated} of ${replicas} Pods at revision ${update}` };
  if (updated < replicas) return { state: 'progressing', detail: `${updated} of ${replicas} Pods updated` };
  return { state: 'done' };
}

function daemonSetProgress(status: JsonObject | undefined, path: string): Progress {
  const desired = count(status?.desiredNumberScheduled, `${path}.status.desiredNumberScheduled`);
  const updated = count(status?.updatedNumberScheduled, `${path}.status.updatedNumberScheduled`);
  const available = count(status?.numberAvailable, `${path}.status.numberAvailable`);
  if (updated < desired) return { state: 'progressing', detail: `${updated} of ${desired} updated Pods scheduled` };
  if (available < desired) return { state: 'progressing', detail: `${available} of ${desired} updated Pods available` };
  return { state: 'done' };
}

// Argo Rollouts' own status reading (argoproj/argo-rollouts pkg/kubectl-argo-rollouts/cmd/status): its phase; and a
// restart asked by spec.restartAt is done once the controller has replaced every older Pod and copied it to
// status.restartedAt (argoproj/argo-rollouts rollout/restart.go, RolloutPodRestarter.Reconcile and SetRestartedAt).
function argoRolloutProgress(spec: JsonObject | undefined, status: JsonObject | undefined, path: string): Progress {
  const phase = optionalString(status?.phase, `${path}.status.phase`);
  const restartAt = optionalString(spec?.restartAt, `${path}.spec.restartAt`);
  const restartedAt = optionalString(status?.restartedAt, `${path}.status.restartedAt`);
  const message = optionalString(status?.message, `${path}.status.message`);
  if (phase === 'Degraded')
    return { state: 'failed', reason: `Rollout degraded${message === '' ? '' : `: ${message}`}` };
  const replicas = optionalInteger(spec?.replicas, `${path}.spec.replicas`) ?? 1;
  const updated = count(status?.updatedReplicas, `${path}.status.updatedReplicas`);
  const available = count(status?.availableReplicas, `${path}.status.availableReplicas`);
  if (phase !== 'Healthy')
    return { state: 'progressing', detail: `phase ${phase || 'unknown'}${message === '' ? '' : `: ${message}`}` };
  if (updated < replicas || available < replicas)
    return { state: 'progressing', detail: `${updated} of ${replicas} updated, ${available} available` };
  if (restartAt !== '' && restartedAt !== restartAt)
    return { state: 'progressing', detail: `Pods older than restartAt ${restartAt} not all replaced yet` };
  return { state: 'done' };
}

/** The rollout of a workload as `kubectl rollout status` reads it: nothing is done until its controller observed the current generation. */
function readProgress(kind: RolloutWorkloadKind, value: unknown, path: string): Progress {
  const object = objectAt(value, path);
  const metadata = optionalObject(object.metadata, `${path}.metadata`);
  const spec = optionalObject(object.spec, `${path}.spec`);
  const status = optionalObject(object.status, `${path}.status`);
  const generation = count(metadata?.generation, `${path}.metadata.generation`);
  // Argo Rollouts writes observedGeneration as a string.
  const observedRaw = status?.observedGeneration;
  const observed =
    typeof observedRaw === 'string' && /^\d+$/.test(observedRaw)
      ? Number(observedRaw)
      : count(observedRaw, `${path}.status.observedGeneration`);
  if (observed < generation || observed === 0)
    return { state: 'progressing', detail: `waiting for the ${kind} controller to observe generation ${generation}` };
  switch (kind) {
    case 'Deployment':
      return deploymentProgress(spec, status, path);
    case 'StatefulSet':
      return statefulSetProgress(spec, status, path);
    case 'DaemonSet':
      return daemonSetProgress(status, path);
    case 'Rollout':
      return argoRolloutProgress(spec, status, path);
  }
}

/** A Pod's uid and whether it is Ready and not being deleted. */
function readPodReadiness(value: unknown, path: string): { readonly uid: string; readonly ready: boolean } {
  const object = objectAt(value, path);
  const metadata = optionalObject(object.metadata, `${path}.metadata`);
  const status = optionalObject(object.status, `${path}.status`);
  const conditions = objectList(status?.conditions, `${path}.status.conditions`);
  const deleting = metadata?.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null;
  return {
    uid: optionalString(metadata?.uid, `${path}.metadata.uid`),
    ready: !deleting && conditions.some((condition) => condition.type === 'Ready' && condition.status === 'True'),
  };
}

export { readProgress, readPodReadiness, readWorkloadShape };
