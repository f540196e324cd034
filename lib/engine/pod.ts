/**
 * The one boundary of the incoming Pod: reads its scheduling fields from untrusted JSON into the engine's types.
 *
 * Each field has two outcomes, as the API server's decoding has:
 * - tolerated: absent, null or empty is treated as absent (Go decodes null into a nil list, map or pointer; a Pod
 *   sent with `requiredDuringSchedulingIgnoredDuringExecution: {}` reaches a webhook with `nodeSelectorTerms: null`);
 * - rejected: any other type is a MalformedInputError naming the field path, e.g.
 *   `request.object.spec.tolerations[1]: expected an object, got null`. A list element or map value is never null
 *   in a review the API server sends (it encodes the Pod from its typed form), so a null there is rejected too.
 * Nothing is ever stricter than the API server: a value it would forward to a webhook is answered, never refused.
 */
import {
  checkNesting,
  isJsonObject,
  objectList,
  isRawInteger,
  optionalBoolean,
  optionalInt64,
  optionalInteger,
  optionalObject,
  optionalString,
  stringList,
  stringMap,
  typeMismatch as mismatch,
  type JsonObject,
} from '../json/index.ts';
import type { Pod } from './pod-shape.ts';
import type { PreferredSchedulingTerm, Toleration } from '../scheduling/index.ts';
import { preferenceFromKubernetes, termFromKubernetes } from '../scheduling/index.ts';
import type { AffinitySelector } from './compile.ts';
import { resolveWorkload, type Workload } from './workload.ts';
import { MIRROR_ANNOTATION } from './binding.ts';

/** What the engine reads of the incoming Pod, every field checked; node affinity is converted on first use only. */
export interface PodFacts {
  /** The Pod object as it arrived: the base of the patch, never edited. */
  readonly pod: Pod;
  readonly workload: Workload;
  /** metadata.name, else generateName ("" when neither is set). */
  readonly displayName: string;
  /** metadata.generateName ("" when unset). */
  readonly generateName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
  readonly topologySpreadConstraints: readonly JsonObject[];
  /** True when the controller owner is a DaemonSet. */
  readonly daemonSetOwned: boolean;
  /** True when the Pod carries the mirror annotation (MIRROR_ANNOTATION). */
  readonly mirror: boolean;
  /** spec.nodeName ("" when unset): the Node the Pod is bound to. */
  readonly nodeName: string;
  /** The required terms on the Pod and the requirements of its widest term, for the runtime limits. */
  readonly rawRequired: { readonly terms: number; readonly widestTerm: number };
  readonly nodeAffinity: AffinitySelector;
}

/** Checks a node selector term; returns its requirement count (label and field requirements). */
function checkTerm(term: JsonObject, path: string): number {
  let requirements = 0;
  for (const list of ['matchExpressions', 'matchFields'] as const) {
    const items = objectList(term[list], `${path}.${list}`);
    items.forEach((item, index) => {
      const itemPath = `${path}.${list}[${index}]`;
      optionalString(item.key, `${itemPath}.key`);
      optionalString(item.operator, `${itemPath}.operator`);
      stringList(item.values, `${itemPath}.values`);
    });
    requirements += items.length;
  }
  return requirements;
}

interface CheckedAffinity {
  readonly required: readonly JsonObject[] | undefined;
  readonly preferred: readonly JsonObject[];
  readonly widestTerm: number;
}

function checkNodeAffinity(spec: JsonObject | undefined, path: string): CheckedAffinity {
  const affinity = optionalObject(spec?.affinity, `${path}.affinity`);
  const nodeAffinity = optionalObject(affinity?.nodeAffinity, `${path}.affinity.nodeAffinity`);
  const base = `${path}.affinity.nodeAffinity`;
  const requiredPath = `${base}.requiredDuringSchedulingIgnoredDuringExecution`;
  const required = optionalObject(nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, requiredPath);
  const terms = objectList(required?.nodeSelectorTerms, `${requiredPath}.nodeSelectorTerms`);
  let widestTerm = 0;
  terms.forEach((term, index) => {
    widestTerm = Math.max(widestTerm, checkTerm(term, `${requiredPath}.nodeSelectorTerms[${index}]`));
  });
  const preferredPath = `${base}.preferredDuringSchedulingIgnoredDuringExecution`;
  const preferred = objectList(nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution, preferredPath);
  preferred.forEach((entry, index) => {
    const entryPath = `${preferredPath}[${index}]`;
    optionalInteger(entry.weight, `${entryPath}.weight`);
    const preference = optionalObject(entry.preference, `${entryPath}.preference`);
    if (preference !== undefined) checkTerm(preference, `${entryPath}.preference`);
  });
  // A required selector without terms is invalid in Kubernetes; it is treated as absent rather than as match-nothing.
  return { required: terms.length === 0 ? undefined : terms, preferred, widestTerm };
}

function checkTolerations(value: unknown, path: string): readonly Toleration[] {
  const tolerations = objectList(value, path);
  tolerations.forEach((toleration, index) => {
    const itemPath = `${path}[${index}]`;
    for (const field of ['key', 'operator', 'value', 'effect'] as const)
      optionalString(toleration[field], `${itemPath}.${field}`);
    optionalInt64(toleration.tolerationSeconds, `${itemPath}.tolerationSeconds`);
  });
  return tolerations;
}

interface Controller {
  readonly kind: string;
  readonly name: string;
}

function controllerOf(metadata: JsonObject | undefined, path: string): Controller | undefined {
  const owners = objectList(metadata?.ownerReferences, `${path}.ownerReferences`);
  let controller: Controller | undefined;
  owners.forEach((owner, index) => {
    const ownerPath = `${path}.ownerReferences[${index}]`;
    const kind = optionalString(owner.kind, `${ownerPath}.kind`);
    const name = optionalString(owner.name, `${ownerPath}.name`);
    if (optionalBoolean(owner.controller, `${ownerPath}.controller`) === true && controller === undefined)
      controller = { kind, name };
  });
  return controller;
}

function affinitySelector(checked: CheckedAffinity): AffinitySelector {
  return {
    required: checked.required?.map((term) => termFromKubernetes(term)),
    preferred: checked.preferred.map((entry) => preferenceFromKubernetes(entry as unknown as PreferredSchedulingTerm)),
  };
}

/**
 * Reads the incoming Pod at `path` (for messages: "request.object" in a review). The namespace is the request's;
 * when it is "", the Pod's own metadata.namespace, then `fallbackNamespace`. Throws MalformedInputError naming the
 * field for a value of the wrong type, and for a Pod nested deeper than MAX_JSON_DEPTH levels.
 */
export function podFacts(pod: unknown, namespace: string, path = 'request.object', fallbackNamespace = ''): PodFacts {
  if (!isJsonObject(pod) || isRawInteger(pod)) throw mismatch(path, 'an object (the Pod)', pod);
  checkNesting(pod, path);
  const metadata = optionalObject(pod.metadata, `${path}.metadata`);
  const spec = optionalObject(pod.spec, `${path}.spec`);
  const metadataPath = `${path}.metadata`;
  const specPath = `${path}.spec`;
  const name = optionalString(metadata?.name, `${metadataPath}.name`);
  const generateName = optionalString(metadata?.generateName, `${metadataPath}.generateName`);
  const ownNamespace = optionalString(metadata?.namespace, `${metadataPath}.namespace`);
  const labels = stringMap(metadata?.labels, `${metadataPath}.labels`);
  const annotations = stringMap(metadata?.annotations, `${metadataPath}.annotations`);
  const controller = controllerOf(metadata, metadataPath);
  const nodeName = optionalString(spec?.nodeName, `${specPath}.nodeName`);
  const nodeSelector = stringMap(spec?.nodeSelector, `${specPath}.nodeSelector`);
  const tolerations = checkTolerations(spec?.tolerations, `${specPath}.tolerations`);
  const topologySpreadConstraints = objectList(
    spec?.topologySpreadConstraints,
    `${specPath}.topologySpreadConstraints`,
  );
  const affinity = checkNodeAffinity(spec, specPath);
  const workload = resolveWorkload(
    { name, generateName, labels, controller },
    namespace || ownNamespace || fallbackNamespace,
  );
  let nodeAffinity: AffinitySelector | undefined;
  return {
    pod: pod,
    workload,
    displayName: name || generateName,
    generateName,
    labels,
    annotations,
    nodeSelector,
    tolerations,
    topologySpreadConstraints,
    daemonSetOwned: controller?.kind === 'DaemonSet',
    mirror: Object.hasOwn(annotations, MIRROR_ANNOTATION),
    nodeName,
    rawRequired: { terms: affinity.required?.length ?? 0, widestTerm: affinity.widestTerm },
    get nodeAffinity(): AffinitySelector {
      nodeAffinity ??= affinitySelector(affinity);
      return nodeAffinity;
    },
  };
}
