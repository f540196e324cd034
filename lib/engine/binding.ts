/**
 * What binding a Pod to a Node means to the engine: a Pod that arrives bound is not its to change, and a running Pod
 * carries what its binding added after admission, which its recreation does not send.
 */
import { isJsonObject } from '../json/index.ts';
import type { Pod } from './pod-shape.ts';

/** The annotation the kubelet sets on a static Pod's mirror Pod (MirrorPodAnnotationKey, pkg/apis/core). */
export const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

// The labels the PodTopologyLabels admission plugin (on by default since Kubernetes 1.35) copies from the Node onto
// the Pod, overwriting the Pod's own: at binding (pods/binding), after the webhook; and, for a Pod created with
// spec.nodeName, before it (plugin/pkg/admission/podtopologylabels/admission.go admitBinding, admitPod).
export const BINDING_LABELS: readonly string[] = ['topology.kubernetes.io/zone', 'topology.kubernetes.io/region'];

/**
 * The fields of spec (`f:nodeName`) or of the labels (`f:<key>`) that a manager of the Pod itself owns, read from
 * managedFields as the API server writes them; undefined when the Pod carries none (`kubectl get` leaves them out).
 * Binding writes no entry (pods/binding updates the stored Pod directly: pkg/registry/core/pod/storage/storage.go),
 * so what it set is owned by no one.
 */
function ownedFields(pod: Pod): { readonly spec: Set<string>; readonly labels: Set<string> } | undefined {
  const entries = pod.metadata?.managedFields;
  if (!Array.isArray(entries) || entries.length === 0) return undefined;
  const spec = new Set<string>();
  const labels = new Set<string>();
  for (const entry of entries as unknown[]) {
    // The status subresource's entries (the kubelet's) own no field of spec or metadata.
    if (!isJsonObject(entry) || (entry.subresource !== undefined && entry.subresource !== '')) continue;
    const fields = isJsonObject(entry.fieldsV1) ? entry.fieldsV1 : {};
    const specFields = fields['f:spec'];
    if (isJsonObject(specFields)) for (const key of Object.keys(specFields)) spec.add(key);
    const metadata = fields['f:metadata'];
    const labelFields = isJsonObject(metadata) ? metadata['f:labels'] : undefined;
    if (isJsonObject(labelFields)) for (const key of Object.keys(labelFields)) labels.add(key);
  }
  return { spec, labels };
}

/**
 * A running Pod as its recreation from its own spec sends it: without the spec.nodeName and the topology labels
 * (BINDING_LABELS) that its binding set after admission, which no manager of the Pod owns. Without managedFields the
 * labels are kept and spec.nodeName is dropped: the scheduler binds nearly every Pod. `pod` itself when nothing is
 * dropped. Pure; never throws (a malformed Pod is the Pod boundary's to report).
 */
export function asRecreated(pod: Pod): Pod {
  if (!isJsonObject(pod) || !isJsonObject(pod.spec)) return pod;
  const owned = ownedFields(pod);
  const dropNodeName = pod.spec.nodeName !== undefined && !(owned?.spec.has('f:nodeName') ?? false);
  const labels = isJsonObject(pod.metadata?.labels) ? pod.metadata.labels : undefined;
  const dropLabels =
    owned === undefined || labels === undefined
      ? []
      : BINDING_LABELS.filter((key) => Object.hasOwn(labels, key) && !owned.labels.has(`f:${key}`));
  if (!dropNodeName && dropLabels.length === 0) return pod;
  const spec = { ...pod.spec };
  if (dropNodeName) delete spec.nodeName;
  if (dropLabels.length === 0) return { ...pod, spec };
  const kept = { ...labels };
  for (const key of dropLabels) delete kept[key];
  return { ...pod, metadata: { ...pod.metadata, labels: kept }, spec };
}
