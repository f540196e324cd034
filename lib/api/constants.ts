/** The constants of the PodMutation contract: its API identity, the product's annotations, reserved keys, limits and budgets. */
/** API group, version and kind of the PodMutation custom resource. */
export const POD_MUTATION_API_VERSION = 'agent.cloudpilot.ai/v1alpha1';
export const POD_MUTATION_KIND = 'PodMutation';
/** Kind of the PodPlacement custom resource (same group and version): managed capacity placement by workloadSelector. */
export const POD_PLACEMENT_KIND = 'PodPlacement';

/** How a workload's Pods are placed on capacity types: all on Spot, all on on-demand, or a share of each. */
export const PLACEMENT_MODES = ['Spot', 'NonSpot', 'Diversity'] as const;
export type PlacementMode = (typeof PLACEMENT_MODES)[number];
/** The Spot share of a Diversity placement that names none. */
export const DEFAULT_SPOT_PERCENT = 50;
/** The minimum of on-demand Pods of a Diversity placement that names none. */
export const DEFAULT_MIN_ON_DEMAND = 0;

/** Annotation prefix owned by the product; rules may not write under it. */
export const PRODUCT_ANNOTATION_PREFIX = 'podmutation.agent.cloudpilot.ai/';
/** Annotation listing the applied rules, comma-separated, in application order. */
export const APPLIED_ANNOTATION = `${PRODUCT_ANNOTATION_PREFIX}applied`;
/** Annotation on a Pod listing the audited rules that matched it, comma-separated, over the Pod's life. */
export const AUDITED_ANNOTATION = `${PRODUCT_ANNOTATION_PREFIX}audited`;
/** Annotation `podmutation rollout` stamps on a workload it restarts: `{"id":"…","at":"<RFC 3339>"}`. */
export const ROLLOUT_ANNOTATION = `${PRODUCT_ANNOTATION_PREFIX}rollout`;
/** Annotation on a PodMutation: `enforce` (the default) applies the rule, `audit` evaluates and records it only. */
export const ENFORCEMENT_ANNOTATION = `${PRODUCT_ANNOTATION_PREFIX}enforcement`;
/**
 * Annotation on a PodMutation: what the webhook does when the rule would turn a Pod that fits some Node or NodePool into
 * one that fits nowhere: `warn` (the default) applies it and warns, `skip` leaves the Pod as the rule found it.
 */
export const IF_UNSCHEDULABLE_ANNOTATION = `${PRODUCT_ANNOTATION_PREFIX}if-unschedulable`;
/** The annotations under PRODUCT_ANNOTATION_PREFIX a PodMutation may carry; any other key under it makes the rule invalid. */
export const POD_MUTATION_ANNOTATIONS: readonly string[] = [ENFORCEMENT_ANNOTATION, IF_UNSCHEDULABLE_ANNOTATION];

/** The values of IF_UNSCHEDULABLE_ANNOTATION. */
export const IF_UNSCHEDULABLE = ['warn', 'skip'] as const;
export type IfUnschedulable = (typeof IF_UNSCHEDULABLE)[number];

/** How a rule takes effect, per rule (ENFORCEMENT_ANNOTATION) or for a whole deployment. */
export const ENFORCEMENTS = ['enforce', 'audit'] as const;
export type Enforcement = (typeof ENFORCEMENTS)[number];
/** The enforcement of a rule without the annotation, and of a deployment, CLI run or rule test that names none. */
export const DEFAULT_ENFORCEMENT: Enforcement = 'enforce';

/** Whether a string is one of ENFORCEMENTS. */
export function isEnforcement(value: unknown): value is Enforcement {
  return (ENFORCEMENTS as readonly unknown[]).includes(value);
}

/** Label keys managed by the product's capacity placement; no customer rule may use them. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set([
  'karpenter.sh/capacity-type',
  'eks.amazonaws.com/capacityType',
  'cloud.google.com/gke-provisioning',
  'node.kubernetes.io/instance-type',
]);

/** Configured and runtime safety limits from the API reference. */
export const LIMITS = Object.freeze({
  configuredRequiredTerms: 64,
  configuredPreferredTerms: 64,
  configuredExpressionsPerTerm: 64,
  configuredValuesPerExpression: 64,
  /** Tolerations, key lists and maps in one rule; the CRD needs this bound to keep its CEL cost within budget. */
  configuredListItems: 64,
  /** Names in one selector dimension (namespaces, kinds, names). */
  selectorNames: 256,
  /** The largest minimum of on-demand Pods a Diversity placement may ask for: far above any workload's replicas, and a safe integer in every sum the sequence rule makes with it. */
  minOnDemand: 1_000_000,
  /** Characters of one annotation value a rule sets. */
  annotationValueChars: 1024,
  combinedRequiredTerms: 64,
  combinedPreferredTerms: 64,
  combinedRequirementsPerTerm: 64,
  intermediateRequiredTerms: 4096,
  rawRequiredTerms: 256,
  rawRequirementsPerTerm: 256,
});

/**
 * The per-rule budget: one rule may not hold more node-selector and label-selector requirements, or values
 * across them, than this, and its JSON may not be larger. The CRD enforces the same counts with CEL and bounds every
 * string, list and map, so that the largest rule the contract admits (539 KiB) serializes within maxBytes; tests build
 * that rule and check both enforcement points.
 */
export const RULE_BUDGET = Object.freeze({
  maxRequirements: 256,
  maxValues: 1024,
  maxBytes: 640 * 1024,
});

/**
 * The snapshot budget: what one snapshot publishes, so that a cold start reads, validates and compiles the largest
 * snapshot it admits in under 500 ms. A cold load costs by the rule as well as by the byte, and by what the bytes hold:
 * on the 2-core build machine, under 10 MiB of JSON alone, 62,000 rules of 161 bytes took 0.74–1.0 s and 10 MiB of
 * 1 KB rules 880 ms, where the largest rule filling them took 233–402 ms. At 5,000 rules (the most `npm run
 * scale:sync` syncs) and 4.5 MiB (which its 4,950 valid rules of about 900 bytes fit), `npm run bench` measures the
 * worst cases at 112–160 ms (the 8 largest rules), 140–240 ms (5,000 of 62,000 minimal ones) and 273–437 ms (5,000
 * rules of 940 bytes of short map entries, the costliest content per byte measured), at loads of 2 to 4.
 */
export const SNAPSHOT_BUDGET = Object.freeze({
  maxRules: 5_000,
  maxRuleBytes: 4.5 * 1024 * 1024,
  /** The invalid rules a snapshot lists, in name order: a cold start decodes and hashes them, though nothing serves them. */
  maxInvalidBytes: 512 * 1024,
  /**
   * The cluster's capacity in its published form (Node shapes with their Nodes' names, NodePools): a larger one is not
   * published, and admission then judges contradictions only. 5,000 Nodes in 50 shapes and 100 NodePools take about
   * 240 KiB of JSON, 13 KiB gzipped (`npm run bench` prints it).
   */
  maxCapacityBytes: 1024 * 1024,
});
