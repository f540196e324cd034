/** The core/v1 scheduling shapes the algebra converts from and to, and rules are written in. Readonly; unknown fields of a Pod pass through untouched. */
import type { RawInteger } from '../json/index.ts';

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

/**
 * The taints the API server's DefaultTolerationSeconds admission plugin tolerates on every Pod that does not already
 * tolerate them, before any webhook runs: operator Exists, effect NoExecute, for DEFAULT_TOLERATION_SECONDS unless the
 * cluster sets --default-not-ready-toleration-seconds or --default-unreachable-toleration-seconds.
 */
const DEFAULT_TOLERATION_KEYS: readonly string[] = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'];
/** The plugin's default seconds (kube-apiserver's flags default to 300). */
const DEFAULT_TOLERATION_SECONDS = 300;

/** A core/v1 Toleration. */
interface Toleration {
  readonly key?: string;
  readonly operator?: string;
  readonly value?: string;
  readonly effect?: string;
  /** A RawInteger when parseJsonExact read digits a double cannot hold (int64 beyond 2^53). */
  readonly tolerationSeconds?: number | RawInteger;
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

export { DEFAULT_TOLERATION_KEYS, DEFAULT_TOLERATION_SECONDS };
export type {
  NodeSelectorRequirement,
  NodeSelectorTerm,
  PreferredSchedulingTerm,
  NodeAffinity,
  Toleration,
  LabelSelectorRequirement,
  LabelSelector,
};
