/**
 * Readonly Kubernetes shapes the product reads and writes: the subset of core/v1 Pod
 * and admission.k8s.io/v1 AdmissionReview it needs. Unknown fields pass through untouched.
 */

/** A core/v1 NodeSelectorRequirement (also used for matchFields). */
interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

/** A core/v1 NodeSelectorTerm; both lists ANDed, an empty term selects no node. */
interface NodeSelectorTerm {
  readonly matchExpressions?: readonly NodeSelectorRequirement[];
  readonly matchFields?: readonly NodeSelectorRequirement[];
}

/** A core/v1 NodeSelector: terms are ORed. */
interface NodeSelector {
  readonly nodeSelectorTerms: readonly NodeSelectorTerm[];
}

/** A core/v1 PreferredSchedulingTerm. */
interface PreferredSchedulingTerm {
  readonly weight: number;
  readonly preference: NodeSelectorTerm;
}

/** A core/v1 NodeAffinity. */
interface NodeAffinity {
  readonly requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector;
  readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly PreferredSchedulingTerm[];
}

/** A core/v1 Affinity; podAffinity and podAntiAffinity are carried as they are. */
interface Affinity {
  readonly nodeAffinity?: NodeAffinity;
  readonly podAffinity?: unknown;
  readonly podAntiAffinity?: unknown;
}

/** A core/v1 Toleration. */
interface Toleration {
  readonly key?: string;
  readonly operator?: string;
  readonly value?: string;
  readonly effect?: string;
  readonly tolerationSeconds?: number;
}

/** A meta/v1 OwnerReference. */
interface OwnerReference {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly name: string;
  readonly uid?: string;
  readonly controller?: boolean;
}

/** A meta/v1 LabelSelectorRequirement. */
interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

/** A meta/v1 LabelSelector. */
interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** The Pod metadata the product reads. */
interface ObjectMeta {
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
  readonly [field: string]: unknown;
}

/** The Pod spec fields the product reads or rewrites. */
interface PodSpec {
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly affinity?: Affinity;
  readonly tolerations?: readonly Toleration[];
  readonly topologySpreadConstraints?: readonly unknown[];
  readonly [field: string]: unknown;
}

/** A core/v1 Pod as sent in an AdmissionReview. */
interface Pod {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
  readonly spec?: PodSpec;
  readonly [field: string]: unknown;
}

/** A meta/v1 GroupVersionKind as used in AdmissionRequest.kind. */
interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** A meta/v1 GroupVersionResource as used in AdmissionRequest.resource. */
interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/** An admission.k8s.io/v1 AdmissionRequest. */
interface AdmissionRequest {
  readonly uid: string;
  readonly kind?: GroupVersionKind;
  readonly resource?: GroupVersionResource;
  readonly subResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation?: string;
  readonly dryRun?: boolean;
  readonly object?: unknown;
  readonly [field: string]: unknown;
}

/** A meta/v1 Status as used in a denial. */
interface Status {
  readonly code?: number;
  readonly message?: string;
  readonly reason?: string;
}

/** An admission.k8s.io/v1 AdmissionResponse. */
interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly patchType?: 'JSONPatch';
  readonly patch?: string;
  readonly status?: Status;
  readonly warnings?: readonly string[];
}

/** An admission.k8s.io/v1 AdmissionReview carrying a request. */
interface AdmissionReviewRequest {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly request: AdmissionRequest;
}

/** An admission.k8s.io/v1 AdmissionReview carrying a response. */
interface AdmissionReviewResponse {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}

export type {
  NodeSelectorRequirement,
  NodeSelectorTerm,
  NodeSelector,
  PreferredSchedulingTerm,
  NodeAffinity,
  Affinity,
  Toleration,
  OwnerReference,
  LabelSelectorRequirement,
  LabelSelector,
  ObjectMeta,
  PodSpec,
  Pod,
  GroupVersionKind,
  GroupVersionResource,
  AdmissionRequest,
  Status,
  AdmissionResponse,
  AdmissionReviewRequest,
  AdmissionReviewResponse,
};
