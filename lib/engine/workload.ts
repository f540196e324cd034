/** The workload a Pod belongs to, resolved from its controller ownerReference. */
export interface Workload {
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
}

// The CronJob controller names Jobs <cronjob>-<scheduled time in minutes since the epoch>.
const CRONJOB_JOB_NAME = /^(.+)-(\d{8,})$/;

/** The parts of a Pod's metadata that name its workload, as the Pod boundary read them. */
interface WorkloadEvidence {
  readonly name: string;
  readonly generateName: string;
  readonly labels: Readonly<Record<string, string>>;
  /** The ownerReference with controller: true, if any. */
  readonly controller: { readonly kind: string; readonly name: string } | undefined;
}

/**
 * Resolves the workload of a Pod: Deployment and Argo Rollout through their ReplicaSet's
 * pod-template-hash suffix, CronJob through its Job's name, other owners as they are, and the Pod
 * itself (by name, else generateName) when it has no controller. The namespace is the request's,
 * because a Pod being created may not carry one yet.
 */
export function resolveWorkload(evidence: WorkloadEvidence, namespace: string): Workload {
  const { controller, labels } = evidence;
  if (controller === undefined) {
    return { kind: 'Pod', name: evidence.name || evidence.generateName, namespace };
  }
  if (controller.kind === 'ReplicaSet') {
    const deploymentName = stripHashSuffix(controller.name, labels['pod-template-hash']);
    if (deploymentName !== undefined) return { kind: 'Deployment', name: deploymentName, namespace };
    const rolloutName = stripHashSuffix(controller.name, labels['rollouts-pod-template-hash']);
    if (rolloutName !== undefined) return { kind: 'Rollout', name: rolloutName, namespace };
    return { kind: 'ReplicaSet', name: controller.name, namespace };
  }
  if (controller.kind === 'Job') {
    const cronJob = CRONJOB_JOB_NAME.exec(controller.name);
    if (cronJob !== null) return { kind: 'CronJob', name: cronJob[1]!, namespace };
    return { kind: 'Job', name: controller.name, namespace };
  }
  return { kind: controller.kind, name: controller.name, namespace };
}

// Strip "-" + the hash label's value from the end of the ReplicaSet name; never guess with a regex.
function stripHashSuffix(replicaSetName: string, hash: string | undefined): string | undefined {
  if (hash === undefined || hash === '') return undefined;
  const suffix = `-${hash}`;
  if (!replicaSetName.endsWith(suffix) || replicaSetName.length === suffix.length) return undefined;
  return replicaSetName.slice(0, -suffix.length);
}
