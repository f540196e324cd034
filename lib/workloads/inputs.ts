/**
 * The Pods the documents of an input stand for: a Pod as it is; an AdmissionReview's
 * request.object, with the request's namespace and uid; a workload manifest (Deployment, StatefulSet, DaemonSet,
 * ReplicaSet, Job, CronJob, Argo Rollout, as `kubectl get -o yaml` or `helm template` print them) as the Pod its
 * controller would create from its template.
 */
import { parseAdmissionReview, passThroughReason, type AdmissionRequest } from '../admission/index.ts';
import type { Pod } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { isJsonObject, previewInput, type JsonObject } from '../json/index.ts';
import { classifyObject, readWorkloadObject } from './objects.ts';
import { podFromWorkload } from './pod.ts';

/**
 * The document a Pod came from, as a test names it: a Pod by its namespace and name (else generateName); a workload
 * by its kind, namespace and name; an AdmissionReview by its request's namespace and uid (a review's Pod rarely has a
 * name yet, and the uid is unique and always present). The namespace is the one the Pod is evaluated in.
 */
interface ResourceIdentity {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** One Pod to evaluate: where it came from, the namespace it is created in, and a uid for the request. */
interface PodInput {
  readonly pod: Pod;
  /** The request's namespace (an AdmissionReview), or "" to read it from the Pod, then the fallback. */
  readonly namespace: string;
  readonly uid: string | undefined;
  /** What the Pod stands for, for people: "document 2 (Deployment checkout)". */
  readonly origin: string;
  /** The document the Pod came from, and its identity. */
  readonly document: JsonObject;
  readonly resource: ResourceIdentity;
  /** Why the webhook lets this AdmissionReview through unchanged (it is no Pod CREATE); absent for a Pod to mutate. */
  readonly passThrough?: string;
}

/** A string field of untrusted JSON, or "" when it is anything else (the engine's boundary reports a wrong type later). */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The identity of a Pod document, in its namespace or the fallback; never throws (explain reports a bad Pod in place). */
function podIdentity(pod: JsonObject, fallbackNamespace: string): ResourceIdentity {
  const metadata = isJsonObject(pod.metadata) ? pod.metadata : {};
  return {
    kind: 'Pod',
    namespace: text(metadata.namespace) || fallbackNamespace,
    name: text(metadata.name) || text(metadata.generateName),
  };
}

/** The Pod of one AdmissionReview document, read through the webhook's own boundary (parseAdmissionReview). */
function reviewPod(document: JsonObject, where: string): PodInput {
  let request: AdmissionRequest;
  try {
    request = parseAdmissionReview(document);
  } catch (error) {
    if (error instanceof MalformedInputError)
      throw new MalformedInputError(`${where}: ${error.message}`, { cause: error });
    throw error;
  }
  const { object } = request;
  const namespace = request.namespace ?? '';
  const identity = { origin: `${where} (AdmissionReview ${request.uid})`, document, uid: request.uid, namespace };
  const resource = { kind: 'AdmissionReview', namespace, name: request.uid };
  const passThrough = passThroughReason(request);
  // The webhook answers an UPDATE, a subresource or another kind by letting it through: so do explain and test.
  if (passThrough !== undefined) {
    const metadata = isJsonObject(object) && isJsonObject(object.metadata) ? object.metadata : {};
    const pod = isJsonObject(object) && (object.kind ?? 'Pod') === 'Pod' ? object : { metadata };
    return { ...identity, pod, resource, passThrough };
  }
  if (!isJsonObject(object)) throw new MalformedInputError(`${where}: the AdmissionReview has no request.object`);
  if (object.kind !== undefined && object.kind !== 'Pod') {
    throw new MalformedInputError(
      `${where}: the AdmissionReview's request.object is not a Pod (kind ${previewInput(object.kind)})`,
    );
  }
  return { ...identity, pod: object, resource };
}

/** A document without a kind is read as a Pod only when it has a Pod's one required field, spec.containers. */
function looksLikePod(document: JsonObject): boolean {
  return isJsonObject(document.spec) && Array.isArray(document.spec.containers);
}

/**
 * The Pod one document of an input stands for (none for a document of another kind: a chart's Services), or the note
 * saying why it was skipped. `where` names the document: "FILE: document 2".
 */
function podInputOf(
  document: unknown,
  where: string,
  fallbackNamespace: string,
): { readonly input: PodInput } | { readonly skipped: string } {
  if (Array.isArray(document))
    return {
      skipped: `${where} is a bare list; put the objects in the items of a List (apiVersion: v1, kind: List, items: [...]); skipped`,
    };
  if (!isJsonObject(document)) throw new MalformedInputError(`${where} is not an object`);
  const { kind } = document;
  if (kind === 'Pod' || (kind === undefined && looksLikePod(document))) {
    const resource = podIdentity(document, fallbackNamespace);
    return { input: { pod: document, namespace: '', uid: undefined, origin: where, document, resource } };
  }
  // A Helm values file, package.json, `{}`: no kind and no Pod's containers, so nothing to review.
  if (kind === undefined) return { skipped: `${where} has no kind and no spec.containers, so it is no Pod; skipped` };
  if (kind === 'AdmissionReview') return { input: reviewPod(document, where) };
  const cls = classifyObject(document, where);
  if (cls === undefined || cls === 'Pod' || cls === 'ControllerRevision') {
    // `helm template` prints Services and ConfigMaps next to the workloads: they create no Pod.
    return { skipped: `${where} (kind ${previewInput(kind)}) creates no Pod; skipped` };
  }
  const workload = readWorkloadObject(document, where);
  const namespace = workload.namespace || fallbackNamespace;
  return {
    input: {
      pod: podFromWorkload(workload, { namespace }),
      namespace,
      uid: undefined,
      origin: `${where} (${workload.kind} ${workload.name})`,
      document,
      resource: { kind: workload.kind, namespace, name: workload.name },
    },
  };
}

/** The Pods of an input's documents, in order, and the documents of other kinds (a chart's Services), skipped. */
function podInputs(
  documents: readonly unknown[],
  source: string,
  fallbackNamespace: string,
): { readonly inputs: PodInput[]; readonly skipped: string[] } {
  const inputs: PodInput[] = [];
  const skipped: string[] = [];
  documents.forEach((document, index) => {
    const read = podInputOf(document, `${source}: document ${index + 1}`, fallbackNamespace);
    if ('input' in read) inputs.push(read.input);
    else skipped.push(read.skipped);
  });
  return { inputs, skipped };
}

export { podInputOf, podInputs };
export type { PodInput, ResourceIdentity };
