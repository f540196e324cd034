/** The owner chain of a running Pod, through the controller ownerReferences, to the workload whose template a rollout would use. */
import { API_GROUPS, isWorkloadKind, type ObjectReference, type PodIdentity, type WorkloadObject } from './objects.ts';
import type { PodFromWorkloadOptions } from './pod.ts';
import { recreationOf, rollsOutByDeletion, type StatefulSetRevision } from './revisions.ts';

/**
 * For a Pod of a StatefulSet that only deleting its Pods rolls out (rollsOutByDeletion): whether deleting it brings
 * it back at the revision it runs, or why it must be held (never deleted).
 */
type Deletion = { readonly safe: true } | { readonly safe: false; readonly hold: string };

/** Where the Pod a rollout would produce comes from. */
type PodOrigin =
  /** A workload's template (a StatefulSet's: the revision a deleted Pod comes back at): give `workload` and `options` to podFromWorkload. */
  | {
      readonly origin: 'template';
      readonly workload: WorkloadObject;
      readonly options: PodFromWorkloadOptions;
      readonly deletion?: Deletion;
    }
  /** A DaemonSet's Pod, which admission never mutates. */
  | { readonly origin: 'daemonset' }
  /** The running Pod itself: it has no controller, or a controller (or its owner, or its revision's template) that is not known. */
  | { readonly origin: 'pod'; readonly reason: string; readonly deletion?: Deletion };

/** Workload objects by namespace, kind and name, and the resolution of a Pod's owner chain through them. */
interface OwnerIndex {
  /** Adds an object; a later object of the same namespace, kind and name replaces the earlier one. */
  add(object: WorkloadObject): void;
  /**
   * Adds a StatefulSet's ControllerRevision; one its StatefulSet (already added) does not name as current is dropped,
   * since only the current revision's template is ever read from a revision (the update revision's is .spec.template).
   */
  addRevision(revision: StatefulSetRevision): void;
  /** The object `reference` names in `namespace`, if known (and of the same uid, when both say one). */
  find(namespace: string, reference: ObjectReference): WorkloadObject | undefined;
  /** Where the Pod a rollout would create for this running Pod comes from. */
  resolve(pod: PodIdentity): PodOrigin;
  /** How many objects the index holds. */
  readonly size: number;
}

const DEFAULT_NAMESPACE = 'default';

function keyOf(namespace: string, kind: string, name: string): string {
  return `${namespace}\u0000${kind}\u0000${name}`;
}

/**
 * Whether the template of an object is ever read: a ReplicaSet or Job with a controller makes its Pods from its
 * owner's template, and a DaemonSet's Pods are skipped; the index drops those templates to hold less.
 */
function templateNeeded(object: WorkloadObject): boolean {
  if (object.kind === 'DaemonSet') return false;
  return !((object.kind === 'ReplicaSet' || object.kind === 'Job') && object.controller !== undefined);
}

function groupMatches(reference: ObjectReference, object: WorkloadObject): boolean {
  const slash = reference.apiVersion.indexOf('/');
  return (
    reference.apiVersion === '' || (slash >= 0 && reference.apiVersion.slice(0, slash) === API_GROUPS[object.kind])
  );
}

/** The hash a running Pod's label carries; a StatefulSet's revision label is `<name>-<hash>`. */
function labelHash(pod: PodIdentity, label: string, prefix = ''): string | undefined {
  const value = pod.labels[label];
  if (value === undefined || value === '' || !value.startsWith(prefix) || value.length === prefix.length)
    return undefined;
  return value.slice(prefix.length);
}

// The CronJob controller names Jobs <cronjob>-<scheduled time in minutes since the epoch>.
function scheduledTimeOf(job: WorkloadObject, cronJob: WorkloadObject): number | undefined {
  const suffix = job.name.startsWith(`${cronJob.name}-`) ? job.name.slice(cronJob.name.length + 1) : '';
  return /^\d{1,15}$/.test(suffix) ? Number(suffix) * 60_000 : undefined;
}

type Objects = ReadonlyMap<string, WorkloadObject>;
type Revisions = ReadonlyMap<string, StatefulSetRevision>;

/** The object a reference names, when the index holds that incarnation of it. */
function findIn(objects: Objects, namespace: string, reference: ObjectReference): WorkloadObject | undefined {
  if (!isWorkloadKind(reference.kind)) return undefined;
  const object = objects.get(keyOf(namespace, reference.kind, reference.name));
  if (object === undefined || !groupMatches(reference, object)) return undefined;
  // Another uid is another incarnation of the name: the Pod's owner was deleted and recreated, or is not this one.
  if (reference.uid !== '' && object.uid !== '' && reference.uid !== object.uid) return undefined;
  return object;
}

function missing(reference: ObjectReference, namespace: string): PodOrigin {
  return { origin: 'pod', reason: `its owner ${reference.kind} ${namespace}/${reference.name} is not in the input` };
}

function fromTemplate(workload: WorkloadObject, options: PodFromWorkloadOptions): PodOrigin {
  return { origin: 'template', workload, options };
}

function throughReplicaSet(objects: Objects, pod: PodIdentity, replicaSet: WorkloadObject): PodOrigin {
  const { namespace } = pod;
  const owner = replicaSet.controller;
  if (owner === undefined) return fromTemplate(replicaSet, { namespace });
  if (owner.kind !== 'Deployment' && owner.kind !== 'Rollout')
    return { origin: 'pod', reason: `its ReplicaSet is controlled by a ${owner.kind}` };
  const workload = findIn(objects, namespace, owner);
  if (workload === undefined || workload.kind !== owner.kind) return missing(owner, namespace);
  const hashLabel = owner.kind === 'Deployment' ? 'pod-template-hash' : 'rollouts-pod-template-hash';
  const hash = labelHash(pod, hashLabel);
  const options = { namespace, ...(hash === undefined ? {} : { templateHash: hash }) };
  if (workload.template !== undefined || workload.workloadRef === undefined) return fromTemplate(workload, options);
  const referenced = findIn(objects, namespace, workload.workloadRef);
  if (referenced === undefined || referenced.template === undefined) return missing(workload.workloadRef, namespace);
  return fromTemplate(workload, { ...options, referencedTemplate: referenced });
}

function throughJob(objects: Objects, pod: PodIdentity, job: WorkloadObject): PodOrigin {
  const { namespace } = pod;
  const owner = job.controller;
  if (owner === undefined) return fromTemplate(job, { namespace });
  if (owner.kind !== 'CronJob') return { origin: 'pod', reason: `its Job is controlled by a ${owner.kind}` };
  const cronJob = findIn(objects, namespace, owner);
  if (cronJob === undefined) return missing(owner, namespace);
  const scheduledTime = scheduledTimeOf(job, cronJob);
  return fromTemplate(cronJob, { namespace, ...(scheduledTime === undefined ? {} : { scheduledTime }) });
}

/**
 * A StatefulSet Pod that only a deletion rolls out: built from the template of the revision a deleted Pod comes back
 * at (the update revision's is .spec.template; the current one's is read from its ControllerRevision), and held when
 * that revision is not the one it runs or cannot be told; from the running Pod itself when the template is unknown.
 */
function throughRevision(revisions: Revisions, pod: PodIdentity, set: WorkloadObject): PodOrigin {
  const recreation = recreationOf(set, pod);
  if (recreation.revision === undefined)
    return { origin: 'pod', reason: recreation.hold, deletion: { safe: false, hold: recreation.hold } };
  const deletion: Deletion = recreation.hold === undefined ? { safe: true } : { safe: false, hold: recreation.hold };
  const options = {
    namespace: pod.namespace,
    podName: pod.name,
    templateHash: recreation.revision.slice(set.name.length + 1),
  };
  const status = set.revisions!;
  if (recreation.choice === 'update' || status.current === status.update)
    return { origin: 'template', workload: set, options, deletion };
  const revision = revisions.get(keyOf(pod.namespace, 'ControllerRevision', recreation.revision));
  if (revision === undefined || (set.uid !== '' && revision.owner.uid !== '' && revision.owner.uid !== set.uid)) {
    const reason = `the template of its current revision ${recreation.revision}, at which Pod ${pod.name} would be recreated, was not read (list controllerrevisions with the StatefulSets)`;
    return { origin: 'pod', reason, deletion: deletion.safe ? { safe: false, hold: reason } : deletion };
  }
  return { origin: 'template', workload: set, options: { ...options, revisionTemplate: revision.template }, deletion };
}

/** Where a Pod of the index comes from: its controller's template, a DaemonSet, or only itself (and why). */
function resolveIn(objects: Objects, revisions: Revisions, pod: PodIdentity): PodOrigin {
  const reference = pod.controller;
  if (reference === undefined) return { origin: 'pod', reason: 'it has no controller' };
  if (reference.kind === 'DaemonSet') return { origin: 'daemonset' };
  const owner = findIn(objects, pod.namespace, reference);
  if (owner === undefined || owner.kind !== reference.kind) return missing(reference, pod.namespace);
  switch (owner.kind) {
    case 'ReplicaSet':
      return throughReplicaSet(objects, pod, owner);
    case 'Job':
      return throughJob(objects, pod, owner);
    case 'StatefulSet': {
      if (rollsOutByDeletion(owner)) return throughRevision(revisions, pod, owner);
      const hash = labelHash(pod, 'controller-revision-hash', `${owner.name}-`);
      return fromTemplate(owner, {
        namespace: pod.namespace,
        podName: pod.name,
        ...(hash === undefined ? {} : { templateHash: hash }),
      });
    }
    default:
      // Deployments, Rollouts and CronJobs create Pods through a ReplicaSet or a Job, never directly.
      return { origin: 'pod', reason: `a ${owner.kind} does not create Pods itself` };
  }
}

/** An empty owner index. */
function createOwnerIndex(): OwnerIndex {
  const objects = new Map<string, WorkloadObject>();
  const revisions = new Map<string, StatefulSetRevision>();
  return {
    add(object: WorkloadObject): void {
      // An object that names no namespace (a manifest) is in the default one, as kubectl would create it.
      const key = keyOf(object.namespace || DEFAULT_NAMESPACE, object.kind, object.name);
      objects.set(key, templateNeeded(object) ? object : { ...object, template: undefined });
    },
    addRevision(revision: StatefulSetRevision): void {
      const namespace = revision.namespace || DEFAULT_NAMESPACE;
      const set = objects.get(keyOf(namespace, 'StatefulSet', revision.owner.name));
      if (set !== undefined && set.revisions?.current !== revision.name) return;
      revisions.set(keyOf(namespace, 'ControllerRevision', revision.name), revision);
    },
    find: (namespace, reference) => findIn(objects, namespace, reference),
    resolve: (pod) => resolveIn(objects, revisions, pod),
    get size(): number {
      return objects.size;
    },
  };
}

export { createOwnerIndex };
export type { Deletion, OwnerIndex, PodOrigin };
