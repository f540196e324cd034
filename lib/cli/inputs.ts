/**
 * The Pods the documents of an input stand for (issue #13, point 3): a Pod as it is; an AdmissionReview's
 * request.object, with the request's namespace and uid; a workload manifest (Deployment, StatefulSet, DaemonSet,
 * ReplicaSet, Job, CronJob, Argo Rollout, as `kubectl get -o yaml` or `helm template` print them) as the Pod its
 * controller would create from its template.
 */
import type { Pod } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { isJsonObject, previewInput } from '../values/index.ts';
import { classifyObject, podFromWorkload, readWorkloadObject } from '../workloads/index.ts';

/** One Pod to evaluate: where it came from, the namespace it is created in, and a uid for the request. */
interface PodInput {
  readonly pod: Pod;
  /** The request's namespace (an AdmissionReview), or "" to read it from the Pod, then the fallback. */
  readonly namespace: string;
  readonly uid: string | undefined;
  /** What the Pod stands for, for people: "document 2 (Deployment checkout)". */
  readonly origin: string;
}

/** The Pod of one AdmissionReview document; anything but a v1 review with a request.object is refused. */
function reviewPod(document: Readonly<Record<string, unknown>>, where: string): PodInput {
  const { request } = document;
  if (document.apiVersion !== 'admission.k8s.io/v1' || !isJsonObject(request) || !isJsonObject(request.object)) {
    throw new MalformedInputError(`${where}: an AdmissionReview must be admission.k8s.io/v1 with a request.object`);
  }
  const objectKind = request.object.kind;
  if (objectKind !== undefined && objectKind !== 'Pod') {
    throw new MalformedInputError(`${where}: the AdmissionReview's request.object is not a Pod (kind ${previewInput(objectKind)})`);
  }
  const namespace = typeof request.namespace === 'string' ? request.namespace : '';
  const uid = typeof request.uid === 'string' ? request.uid : undefined;
  return { pod: request.object, namespace, uid, origin: `${where} (AdmissionReview ${uid ?? 'without uid'})` };
}

/** The Pods of an input's documents, in order, and the documents of other kinds (a chart's Services), skipped. */
function podInputs(documents: readonly unknown[], source: string, fallbackNamespace: string): { readonly inputs: PodInput[]; readonly skipped: string[] } {
  const skipped: string[] = [];
  const inputs = documents.flatMap((document, index): PodInput[] => {
    const where = `${source}: document ${index + 1}`;
    if (!isJsonObject(document)) throw new MalformedInputError(`${where} is not an object`);
    const { kind } = document;
    if (kind === undefined || kind === 'Pod') return [{ pod: document, namespace: '', uid: undefined, origin: where }];
    if (kind === 'AdmissionReview') return [reviewPod(document, where)];
    const cls = classifyObject(document, where);
    if (cls === undefined || cls === 'Pod') {
      // `helm template` prints Services and ConfigMaps next to the workloads: they create no Pod.
      skipped.push(`${where} (kind ${previewInput(kind)}) creates no Pod; skipped`);
      return [];
    }
    const workload = readWorkloadObject(document, where);
    const namespace = workload.namespace || fallbackNamespace;
    return [{ pod: podFromWorkload(workload, { namespace }), namespace, uid: undefined, origin: `${where} (${workload.kind} ${workload.name})` }];
  });
  return { inputs, skipped };
}

export { podInputs };
export type { PodInput };
