/** The Pod a controller would create from a workload's current template, named and labelled as the controller does it. */
import type { OwnerReference, Pod } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { canonicalJson } from '../json/index.ts';
import type { PodTemplate, WorkloadObject } from './objects.ts';

/** What the caller knows of the Pod to build; each field is optional but the namespace. */
interface PodFromWorkloadOptions {
  /** The namespace the Pod is created in (the running Pod's, or the object's). */
  readonly namespace: string;
  /** The Pod's name, for a StatefulSet, whose Pods keep their ordinal (default: the first ordinal). */
  readonly podName?: string;
  /** The template hash to label the Pod with (the running Pod's); derived from the template when absent. */
  readonly templateHash?: string;
  /** When a CronJob's Job is scheduled, in ms since the epoch (default: its last schedule time). */
  readonly scheduledTime?: number;
  /** The Deployment a Rollout's spec.workloadRef names: its template is the Rollout's. */
  readonly referencedTemplate?: WorkloadObject;
  /** A StatefulSet's revision other than .spec.template's (its current revision, from its ControllerRevision): the Pod is built from it. */
  readonly revisionTemplate?: PodTemplate;
}

// The alphabet of Kubernetes' rand.SafeEncodeString: no vowels (no words) and no look-alike characters.
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
// A CronJob that says neither when it last ran nor when it was created: 2020-01-01T00:00:00Z, any fixed time will do.
const FALLBACK_SCHEDULE_MS = Date.UTC(2020, 0, 1);
const STATEFULSET_ORDINAL = /-(\d+)$/;

/**
 * A stable template hash in the form the controllers print (FNV-1a 32 of the template, its decimal digits mapped through
 * SafeEncodeString's alphabet). It is not the controllers' own value: theirs hashes Go's spew dump of the template
 * (plus the collision count), which cannot be reproduced from JSON. Callers that know the running Pod's hash pass it.
 * @internal Exported for tests: the tests name Pods as the ReplicaSet controller does.
 */
function templateHash(template: PodTemplate): string {
  // An absent map is written null, as the hash has always been taken (a changed hash would read as a changed template).
  const text = canonicalJson({
    labels: template.labels ?? null,
    annotations: template.annotations ?? null,
    spec: template.spec ?? {},
  });
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return [...String(hash)].map((digit) => SAFE_ALPHABET[digit.charCodeAt(0) % SAFE_ALPHABET.length]!).join('');
}

function ownerReference(
  apiVersion: string,
  kind: string,
  name: string,
  uid: string,
): OwnerReference & { readonly blockOwnerDeletion: true } {
  return { apiVersion, kind, name, ...(uid === '' ? {} : { uid }), controller: true, blockOwnerDeletion: true };
}

interface Identity {
  readonly name?: string;
  readonly generateName?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly owner: OwnerReference;
  readonly spec?: Readonly<Record<string, unknown>>;
}

/** The Pod of a template: its labels, annotations and finalizers, the given identity, and the template's spec (shared, never edited). */
function podOf(template: PodTemplate, namespace: string, identity: Identity): Pod {
  const metadata = {
    ...(identity.name === undefined ? {} : { name: identity.name }),
    ...(identity.generateName === undefined ? {} : { generateName: identity.generateName }),
    namespace,
    labels: { ...template.labels, ...identity.labels },
    ...(Object.keys(template.annotations).length === 0 ? {} : { annotations: template.annotations }),
    ...(template.finalizers.length === 0 ? {} : { finalizers: template.finalizers }),
    ownerReferences: [identity.owner],
  };
  const spec = identity.spec === undefined ? template.spec : { ...template.spec, ...identity.spec };
  return { apiVersion: 'v1', kind: 'Pod', metadata, ...(spec === undefined ? {} : { spec }) };
}

function jobLabels(jobName: string, uid: string): Record<string, string> {
  // The Job controller's selector labels, the legacy ones beside the batch.kubernetes.io ones; the uid ones only when known.
  const labels: Record<string, string> = { 'batch.kubernetes.io/job-name': jobName, 'job-name': jobName };
  if (uid !== '') Object.assign(labels, { 'batch.kubernetes.io/controller-uid': uid, 'controller-uid': uid });
  return labels;
}

/** The ordinal of a StatefulSet's Pod, from its name `<statefulset>-<ordinal>`; undefined for a name of another form. */
function podOrdinal(statefulSetName: string, podName: string | undefined): number | undefined {
  const ordinalText = podName?.startsWith(`${statefulSetName}-`) ? STATEFULSET_ORDINAL.exec(podName)?.[1] : undefined;
  return ordinalText === undefined ? undefined : Number(ordinalText);
}

function statefulSetPod(object: WorkloadObject, template: PodTemplate, options: PodFromWorkloadOptions): Pod {
  const prefix = `${object.name}-`;
  const ordinal = podOrdinal(object.name, options.podName) ?? object.ordinalStart;
  const name = `${prefix}${ordinal}`;
  const revision = `${prefix}${options.templateHash || templateHash(template)}`;
  return podOf(template, options.namespace, {
    name,
    labels: {
      'controller-revision-hash': revision,
      'statefulset.kubernetes.io/pod-name': name,
      'apps.kubernetes.io/pod-index': String(ordinal),
    },
    owner: ownerReference(object.apiVersion || 'apps/v1', 'StatefulSet', object.name, object.uid),
    // The StatefulSet controller gives each Pod its stable network identity.
    spec: { hostname: name, ...(object.serviceName === '' ? {} : { subdomain: object.serviceName }) },
  });
}

function templateOf(object: WorkloadObject, options: PodFromWorkloadOptions): PodTemplate {
  const template = options.revisionTemplate ?? object.template ?? options.referencedTemplate?.template;
  if (template === undefined) {
    throw new MalformedInputError(
      `${object.path}: ${object.kind} "${object.name}" has no Pod template (spec.workloadRef names one not given)`,
      {
        context: { field: `${object.path}.spec.template` },
      },
    );
  }
  return template;
}

/**
 * The Pod a workload's controller would create now from the object's current template, as admission sees it (before
 * the API server names a generateName Pod): Deployment and Rollout through a ReplicaSet `<name>-<hash>` with
 * pod-template-hash (rollouts-pod-template-hash); StatefulSet `<name>-<ordinal>` with its revision, pod-name and
 * pod-index labels; Job with the job-name and controller-uid labels; CronJob through a Job `<name>-<minutes since the
 * epoch>`; ReplicaSet and DaemonSet as their own controllers. Pure; the Pod shares the template's subtrees.
 */
function podFromWorkload(object: WorkloadObject, options: PodFromWorkloadOptions): Pod {
  const template = templateOf(object, options);
  const { namespace } = options;
  switch (object.kind) {
    case 'Deployment':
    case 'Rollout': {
      const hash = options.templateHash || templateHash(template);
      const replicaSet = `${object.name}-${hash}`;
      const label = object.kind === 'Deployment' ? 'pod-template-hash' : 'rollouts-pod-template-hash';
      return podOf(template, namespace, {
        generateName: `${replicaSet}-`,
        labels: { [label]: hash },
        owner: ownerReference('apps/v1', 'ReplicaSet', replicaSet, ''),
      });
    }
    case 'StatefulSet':
      return statefulSetPod(object, template, options);
    case 'Job':
      return podOf(template, namespace, {
        generateName: `${object.name}-`,
        labels: jobLabels(object.name, object.uid),
        owner: ownerReference(object.apiVersion || 'batch/v1', 'Job', object.name, object.uid),
      });
    case 'CronJob': {
      // The CronJob controller names each Job after its scheduled time in minutes since the epoch.
      const minutes = Math.floor((options.scheduledTime ?? object.scheduledTime ?? FALLBACK_SCHEDULE_MS) / 60_000);
      const job = `${object.name}-${minutes}`;
      return podOf(template, namespace, {
        generateName: `${job}-`,
        labels: jobLabels(job, ''),
        owner: ownerReference('batch/v1', 'Job', job, ''),
      });
    }
    case 'ReplicaSet':
      return podOf(template, namespace, {
        generateName: `${object.name}-`,
        labels: {},
        owner: ownerReference(object.apiVersion || 'apps/v1', 'ReplicaSet', object.name, object.uid),
      });
    case 'DaemonSet': {
      // Only the identity: the node affinity and tolerations the DaemonSet controller adds are moot, the engine skips these Pods.
      const labels: Record<string, string> = {
        'controller-revision-hash': options.templateHash || templateHash(template),
      };
      if (object.generation !== undefined) labels['pod-template-generation'] = String(object.generation);
      return podOf(template, namespace, {
        generateName: `${object.name}-`,
        labels,
        owner: ownerReference(object.apiVersion || 'apps/v1', 'DaemonSet', object.name, object.uid),
      });
    }
  }
}

export { podFromWorkload, podOrdinal, templateHash };
export type { PodFromWorkloadOptions };
