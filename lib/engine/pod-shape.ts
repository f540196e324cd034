/** The core/v1 Pod the engine reads and writes: the subset it needs, every other field carried as it is. */
import type { NodeAffinity, Toleration } from '../scheduling/index.ts';

/** A core/v1 Affinity; podAffinity and podAntiAffinity are carried as they are. */
interface Affinity {
  readonly nodeAffinity?: NodeAffinity;
  readonly podAffinity?: unknown;
  readonly podAntiAffinity?: unknown;
}

/** A meta/v1 OwnerReference. */
interface OwnerReference {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly name: string;
  readonly uid?: string;
  readonly controller?: boolean;
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

export type { Affinity, OwnerReference, Pod };
