/** The core/v1 scheduling shapes the algebra converts from and to, and rules are written in. Readonly; unknown fields of a Pod pass through untouched. */
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

/** A core/v1 Toleration. */
interface Toleration {
  readonly key?: string;
  readonly operator?: string;
  readonly value?: string;
  readonly effect?: string;
  readonly tolerationSeconds?: number;
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

export type {
  NodeSelectorRequirement,
  NodeSelectorTerm,
  NodeSelector,
  PreferredSchedulingTerm,
  NodeAffinity,
  Toleration,
  LabelSelectorRequirement,
  LabelSelector,
};
