/** Workload objects (and Pods' identities) read from untrusted JSON: every field this folder uses, checked with its path. */
import { podFacts } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import {
  isJsonObject,
  objectList,
  optionalBoolean,
  optionalInteger,
  optionalObject,
  optionalString,
  previewInput,
  stringList,
  stringMap,
  typeMismatch,
  type JsonObject,
} from '../json/index.ts';

/** The kinds whose Pods a controller creates from a template, and that this folder reads. */
type WorkloadKind = 'Deployment' | 'ReplicaSet' | 'StatefulSet' | 'DaemonSet' | 'Job' | 'CronJob' | 'Rollout';

/** An object's kind as the report sorts it: a Pod, a workload, a ControllerRevision (apps), or something else (ignored). */
type ObjectClass = 'Pod' | WorkloadKind | 'ControllerRevision' | undefined;

/** An ownerReference (or a Rollout's workloadRef): whom it names; uid is "" when absent. */
interface ObjectReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** A Pod template as a controller copies it into its Pods: labels, annotations, finalizers and the spec. */
interface PodTemplate {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly finalizers: readonly string[];
  readonly spec: JsonObject | undefined;
  /** Where the template sits in its input ("items[3].spec.template"), for the field paths of later errors. */
  readonly path: string;
}

/**
 * What a StatefulSet's status says of its revisions (the names of ControllerRevisions, `<statefulset>-<hash>`): the
 * current revision, the update revision (.spec.template's), how many Pods run the current one, and the generation the
 * controller last observed.
 */
interface StatefulSetRevisions {
  /** status.currentRevision; "" when absent. */
  readonly current: string;
  /** status.updateRevision; "" when absent. */
  readonly update: string;
  /** status.currentReplicas (0 when absent). */
  readonly currentReplicas: number;
  readonly observedGeneration: number | undefined;
}

/** A workload object, checked: its identity, its controller, its current Pod template and what its kind adds. */
interface WorkloadObject {
  readonly kind: WorkloadKind;
  readonly apiVersion: string;
  /** "" when the object does not say (a manifest); the Pod's namespace is then used. */
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly generation: number | undefined;
  /** The ownerReference with controller: true, if any. */
  readonly controller: ObjectReference | undefined;
  /** Undefined only for a Rollout that takes its template from spec.workloadRef. */
  readonly template: PodTemplate | undefined;
  /** A Rollout's spec.workloadRef: the Deployment whose template it runs. */
  readonly workloadRef: ObjectReference | undefined;
  /** A StatefulSet's spec.serviceName ("" otherwise). */
  readonly serviceName: string;
  /** A StatefulSet's first ordinal, spec.ordinals.start (0 otherwise). */
  readonly ordinalStart: number;
  /** A StatefulSet's spec.updateStrategy.type: RollingUpdate (the default) or OnDelete, which recreates no Pod itself ("" otherwise). */
  readonly updateStrategy: string;
  /** A StatefulSet's spec.updateStrategy.rollingUpdate.partition (0 otherwise): a rolling update leaves the ordinals below it alone. */
  readonly partition: number;
  /** Whether a StatefulSet's spec.updateStrategy.rollingUpdate is set: the controller reads an absent one otherwise than partition 0. */
  readonly rollingUpdate: boolean;
  /** A StatefulSet's status, as far as it names revisions (undefined for other kinds). */
  readonly revisions: StatefulSetRevisions | undefined;
  /** A CronJob's last schedule time (status.lastScheduleTime, else metadata.creationTimestamp) in ms since the epoch. */
  readonly scheduledTime: number | undefined;
  /** Where the object sits in its input, for messages. */
  readonly path: string;
}

/** The parts of a running Pod that name its workload, read with their field paths. */
interface PodIdentity {
  /** The Pod's namespace, else `fallbackNamespace`. */
  readonly namespace: string;
  readonly name: string;
  readonly generateName: string;
  readonly uid: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly controller: ObjectReference | undefined;
  /** status.phase ("" when absent): Succeeded and Failed Pods have finished and are never scheduled again. */
  readonly phase: string;
}

/** The API group of each workload kind: an object of another group that borrows the kind's name is not one. */
const API_GROUPS: Readonly<Record<WorkloadKind, string>> = {
  Deployment: 'apps',
  ReplicaSet: 'apps',
  StatefulSet: 'apps',
  DaemonSet: 'apps',
  Job: 'batch',
  CronJob: 'batch',
  Rollout: 'argoproj.io',
};

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** True for the kinds this folder reads. */
function isWorkloadKind(kind: string): kind is WorkloadKind {
  return Object.hasOwn(API_GROUPS, kind);
}

/**
 * Sorts an object of a list: 'Pod' for a core/v1 Pod, its WorkloadKind for a workload of its API group,
 * 'ControllerRevision' for an apps one, undefined for any other object (a Service in `kubectl get all`, a CRD that
 * borrows a kind's name). Throws MalformedInputError naming the field when the value is not an object or has no kind.
 */
function classifyObject(value: unknown, path: string): ObjectClass {
  if (!isJsonObject(value)) throw typeMismatch(path, 'an object', value);
  const kind = optionalString(value.kind, `${path}.kind`);
  if (kind === '')
    throw new MalformedInputError(`${path}.kind: expected the kind of the object, got nothing`, {
      context: { field: `${path}.kind` },
    });
  const apiVersion = optionalString(value.apiVersion, `${path}.apiVersion`);
  if (kind === 'Pod') return apiVersion === '' || apiVersion === 'v1' ? 'Pod' : undefined;
  if (kind === 'ControllerRevision')
    return apiVersion === '' || groupOf(apiVersion) === 'apps' ? 'ControllerRevision' : undefined;
  if (!isWorkloadKind(kind)) return undefined;
  return apiVersion === '' || groupOf(apiVersion) === API_GROUPS[kind] ? kind : undefined;
}

function requiredName(value: unknown, path: string): string {
  const name = optionalString(value, path);
  if (name === '') throw new MalformedInputError(`${path}: expected a name, got nothing`, { context: { field: path } });
  return name;
}

/** The controller ownerReference of `metadata` at `path`, every reference checked. */
function controllerOf(metadata: JsonObject | undefined, path: string): ObjectReference | undefined {
  let controller: ObjectReference | undefined;
  objectList(metadata?.ownerReferences, `${path}.ownerReferences`).forEach((owner, index) => {
    const ownerPath = `${path}.ownerReferences[${index}]`;
    const reference = {
      apiVersion: optionalString(owner.apiVersion, `${ownerPath}.apiVersion`),
      kind: optionalString(owner.kind, `${ownerPath}.kind`),
      name: optionalString(owner.name, `${ownerPath}.name`),
      uid: optionalString(owner.uid, `${ownerPath}.uid`),
    };
    // As in Kubernetes, the first reference with controller: true is the controller.
    if (optionalBoolean(owner.controller, `${ownerPath}.controller`) === true && controller === undefined)
      controller = reference;
  });
  return controller;
}

/** A timestamp field in ms since the epoch; absent or null is undefined, text that is no date is malformed. */
function optionalTime(value: unknown, path: string): number | undefined {
  const text = optionalString(value, path);
  if (text === '') return undefined;
  const time = Date.parse(text);
  if (Number.isNaN(time))
    throw new MalformedInputError(`${path}: expected an RFC 3339 time, got ${previewInput(text)}`, {
      context: { field: path },
    });
  return time;
}

/**
 * Reads the Pod template at `path`: an object (required), whose metadata and spec are checked as the engine's Pod
 * boundary checks a Pod, so that a Pod built from it never fails later.
 */
function readTemplate(value: unknown, path: string, namespace: string): PodTemplate {
  if (!isJsonObject(value)) throw typeMismatch(path, 'an object (the Pod template)', value);
  const metadata = optionalObject(value.metadata, `${path}.metadata`);
  const spec = optionalObject(value.spec, `${path}.spec`);
  podFacts({ metadata, spec }, namespace, path, 'default');
  return {
    labels: stringMap(metadata?.labels, `${path}.metadata.labels`),
    annotations: stringMap(metadata?.annotations, `${path}.metadata.annotations`),
    finalizers: stringList(metadata?.finalizers, `${path}.metadata.finalizers`),
    spec,
    path,
  };
}

function readWorkloadRef(spec: JsonObject | undefined, path: string): ObjectReference | undefined {
  const reference = optionalObject(spec?.workloadRef, `${path}.workloadRef`);
  if (reference === undefined) return undefined;
  return {
    apiVersion: optionalString(reference.apiVersion, `${path}.workloadRef.apiVersion`),
    kind: requiredName(reference.kind, `${path}.workloadRef.kind`),
    name: requiredName(reference.name, `${path}.workloadRef.name`),
    uid: '',
  };
}

/**
 * Reads a workload object (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, Argo Rollout) from untrusted
 * JSON at `path`. Throws MalformedInputError naming the field ("items[3].spec.template: expected an object …") for a
 * wrong type, a missing name or template, and for another kind.
 */
function readWorkloadObject(value: unknown, path: string): WorkloadObject {
  const kind = classifyObject(value, path);
  const object = value as JsonObject;
  if (kind === undefined || kind === 'Pod' || kind === 'ControllerRevision') {
    throw new MalformedInputError(
      `${path}: expected a workload (${Object.keys(API_GROUPS).join(', ')}), got ${previewInput(object.kind)}`,
      {
        context: { field: `${path}.kind` },
      },
    );
  }
  const metadata = optionalObject(object.metadata, `${path}.metadata`);
  const namespace = optionalString(metadata?.namespace, `${path}.metadata.namespace`);
  const spec = optionalObject(object.spec, `${path}.spec`);
  const specPath = `${path}.spec`;
  const workloadRef = kind === 'Rollout' ? readWorkloadRef(spec, specPath) : undefined;
  let template: PodTemplate | undefined;
  if (kind === 'CronJob') {
    const jobTemplate = optionalObject(spec?.jobTemplate, `${specPath}.jobTemplate`);
    const jobSpec = optionalObject(jobTemplate?.spec, `${specPath}.jobTemplate.spec`);
    template = readTemplate(jobSpec?.template, `${specPath}.jobTemplate.spec.template`, namespace);
  } else if (!(workloadRef !== undefined && spec?.template === undefined)) {
    // A Rollout with spec.workloadRef runs the referenced Deployment's template and carries none of its own.
    template = readTemplate(spec?.template, `${specPath}.template`, namespace);
  }
  const ordinals = kind === 'StatefulSet' ? optionalObject(spec?.ordinals, `${specPath}.ordinals`) : undefined;
  const strategyPath = `${specPath}.updateStrategy`;
  const strategy = kind === 'StatefulSet' ? optionalObject(spec?.updateStrategy, strategyPath) : undefined;
  const rollingUpdate = optionalObject(strategy?.rollingUpdate, `${strategyPath}.rollingUpdate`);
  const status =
    kind === 'CronJob' || kind === 'StatefulSet' ? optionalObject(object.status, `${path}.status`) : undefined;
  return {
    kind,
    apiVersion: optionalString(object.apiVersion, `${path}.apiVersion`),
    namespace,
    name: requiredName(metadata?.name, `${path}.metadata.name`),
    uid: optionalString(metadata?.uid, `${path}.metadata.uid`),
    generation: optionalInteger(metadata?.generation, `${path}.metadata.generation`),
    controller: controllerOf(metadata, `${path}.metadata`),
    template,
    workloadRef,
    serviceName: kind === 'StatefulSet' ? optionalString(spec?.serviceName, `${specPath}.serviceName`) : '',
    ordinalStart: optionalInteger(ordinals?.start, `${specPath}.ordinals.start`) ?? 0,
    // As the API server defaults them: an absent type is RollingUpdate, an absent partition 0.
    updateStrategy:
      kind === 'StatefulSet' ? optionalString(strategy?.type, `${strategyPath}.type`) || 'RollingUpdate' : '',
    partition: optionalInteger(rollingUpdate?.partition, `${strategyPath}.rollingUpdate.partition`) ?? 0,
    rollingUpdate: rollingUpdate !== undefined,
    revisions: kind === 'StatefulSet' ? readRevisions(status, `${path}.status`) : undefined,
    scheduledTime:
      kind === 'CronJob'
        ? (optionalTime(status?.lastScheduleTime, `${path}.status.lastScheduleTime`) ??
          optionalTime(metadata?.creationTimestamp, `${path}.metadata.creationTimestamp`))
        : undefined,
    path,
  };
}

function readRevisions(status: JsonObject | undefined, path: string): StatefulSetRevisions {
  return {
    current: optionalString(status?.currentRevision, `${path}.currentRevision`),
    update: optionalString(status?.updateRevision, `${path}.updateRevision`),
    currentReplicas: optionalInteger(status?.currentReplicas, `${path}.currentReplicas`) ?? 0,
    observedGeneration: optionalInteger(status?.observedGeneration, `${path}.observedGeneration`),
  };
}

/** Reads the identity of a running Pod at `path`: namespace (else `fallbackNamespace`), names, uid, labels, annotations, controller, phase. */
function readPodIdentity(value: unknown, path: string, fallbackNamespace = 'default'): PodIdentity {
  if (!isJsonObject(value)) throw typeMismatch(path, 'an object (the Pod)', value);
  const metadata = optionalObject(value.metadata, `${path}.metadata`);
  const metadataPath = `${path}.metadata`;
  return {
    namespace: optionalString(metadata?.namespace, `${metadataPath}.namespace`) || fallbackNamespace,
    name: optionalString(metadata?.name, `${metadataPath}.name`),
    generateName: optionalString(metadata?.generateName, `${metadataPath}.generateName`),
    uid: optionalString(metadata?.uid, `${metadataPath}.uid`),
    labels: stringMap(metadata?.labels, `${metadataPath}.labels`),
    annotations: stringMap(metadata?.annotations, `${metadataPath}.annotations`),
    controller: controllerOf(metadata, metadataPath),
    phase: optionalString(optionalObject(value.status, `${path}.status`)?.phase, `${path}.status.phase`),
  };
}

export { API_GROUPS, classifyObject, controllerOf, isWorkloadKind, readPodIdentity, readTemplate, readWorkloadObject };
export type { ObjectReference, PodIdentity, PodTemplate, WorkloadObject };
