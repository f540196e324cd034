import {
  byApplicationOrder,
  describeIssues,
  ruleToResource,
  validatePodMutation,
  type Enforcement,
  type IfUnschedulable,
  type NormalizedRule,
} from '../api/index.ts';
import { StoreError } from '../errors/index.ts';
import type { LabelSelectorRequirement, NodeAffinity, Toleration } from '../scheduling/index.ts';
import { preferenceFromKubernetes, termFromKubernetes, type Preference, type Term } from '../scheduling/index.ts';
import { indexRules, type RuleIndex } from './rule-index.ts';

/** A node affinity in the algebra: required terms (undefined: no required selector) and preferences. */
export interface AffinitySelector {
  readonly required: readonly Term[] | undefined;
  readonly preferred: readonly Preference[];
}

/** A rule compiled for fast matching and application. Immutable; built once per snapshot. */
export interface CompiledRule {
  readonly name: string;
  readonly priority: number;
  readonly enabled: boolean;
  /** `audit`: matched and recorded (AuditedMatch), never applied. */
  readonly enforcement: Enforcement;
  /** `skip`: not applied to a Pod it would turn from fitting somewhere into fitting nowhere (MutationOptions.capacity). */
  readonly ifUnschedulable: IfUnschedulable;
  readonly match: {
    readonly namespaces: ReadonlySet<string> | undefined;
    readonly kinds: ReadonlySet<string> | undefined;
    readonly names: ReadonlySet<string> | undefined;
    readonly matchLabels: readonly (readonly [string, string])[];
    readonly labelExpressions: readonly LabelSelectorRequirement[];
    readonly nodeSelector: readonly (readonly [string, string])[];
    readonly tolerations: readonly Toleration[];
    readonly nodeAffinity: AffinitySelector | undefined;
  };
  readonly remove: {
    readonly nodeAffinityAll: boolean;
    readonly nodeAffinityKeys: ReadonlySet<string>;
    readonly nodeSelectorKeys: readonly string[];
    readonly tolerationKeys: ReadonlySet<string>;
  };
  readonly add: {
    readonly annotations: readonly (readonly [string, string])[];
    readonly nodeSelector: readonly (readonly [string, string])[];
    readonly tolerations: readonly Toleration[];
    readonly nodeAffinity: AffinitySelector | undefined;
  };
}

/** The rules of one snapshot, compiled and in application order (ascending priority, then name), and their index. */
export interface RuleSet {
  readonly rules: readonly CompiledRule[];
  /** The enabled rules by namespace, kind and name, as positions in `rules`. */
  readonly index: RuleIndex;
}

function listToSet(values: readonly string[] | undefined): ReadonlySet<string> | undefined {
  // An absent or empty dimension matches everything.
  return values === undefined || values.length === 0 ? undefined : new Set(values);
}

// Shared by every rule without the field: a snapshot compiles 10,000 rules at a cold start.
const NO_ENTRIES: readonly (readonly [string, string])[] = Object.freeze([]);
const NO_KEYS: ReadonlySet<string> = new Set();

function entriesOf(map: Readonly<Record<string, string>> | undefined): readonly (readonly [string, string])[] {
  return map === undefined ? NO_ENTRIES : Object.entries(map);
}

function keySet(keys: readonly string[] | undefined): ReadonlySet<string> {
  return keys === undefined || keys.length === 0 ? NO_KEYS : new Set(keys);
}

function affinitySelector(source: NodeAffinity | undefined): AffinitySelector | undefined {
  if (source === undefined) return undefined;
  const required = source.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms.map(termFromKubernetes);
  const preferred = (source.preferredDuringSchedulingIgnoredDuringExecution ?? []).map(preferenceFromKubernetes);
  return { required: required?.length ? required : undefined, preferred };
}

/** A value computed on its first read, then kept. */
function onFirstRead<T>(compute: () => T): () => T {
  let computed = false;
  let value: T;
  return () => {
    if (!computed) {
      value = compute();
      computed = true;
    }
    return value;
  };
}

/**
 * Compiles one validated rule. Pure. Its node affinities are converted on first read: that is most of compiling a
 * rule, a cold start compiles every rule of the snapshot, and a review reads only those of its candidates.
 */
function compileRule(rule: NormalizedRule): CompiledRule {
  const selector = rule.workloadSelector;
  const { mutationRemove: remove, mutationAdd: add } = rule;
  const matchAffinity = onFirstRead(() => affinitySelector(selector.nodeAffinityMatch));
  const addAffinity = onFirstRead(() => affinitySelector(add.nodeAffinity));
  return {
    name: rule.name,
    priority: rule.priority,
    enabled: rule.enable,
    enforcement: rule.enforcement,
    ifUnschedulable: rule.ifUnschedulable ?? 'warn',
    match: {
      namespaces: listToSet(selector.namespaces),
      kinds: listToSet(selector.kinds),
      names: listToSet(selector.names),
      matchLabels: entriesOf(selector.labelSelector?.matchLabels),
      labelExpressions: selector.labelSelector?.matchExpressions ?? [],
      nodeSelector: entriesOf(selector.nodeSelectorMatch),
      tolerations: selector.tolerationsMatch ?? [],
      get nodeAffinity() {
        return matchAffinity();
      },
    },
    remove: {
      nodeAffinityAll: remove.nodeAffinity?.all === true,
      nodeAffinityKeys: keySet(remove.nodeAffinity?.keys),
      nodeSelectorKeys: remove.nodeSelector?.keys ?? [],
      tolerationKeys: keySet(remove.tolerations?.keys),
    },
    add: {
      annotations: entriesOf(add.annotations),
      nodeSelector: entriesOf(add.nodeSelector),
      tolerations: add.tolerations ?? [],
      get nodeAffinity() {
        return addAffinity();
      },
    },
  };
}

/** Compiles validated rules into a rule set in application order. Pure; names must be unique. */
export function compileRuleSet(rules: readonly NormalizedRule[]): RuleSet {
  const compiled = rules.map(compileRule).sort(byApplicationOrder);
  return { rules: compiled, index: indexRules(compiled) };
}

/**
 * Compiles the rules of a snapshot read from the store, validating each again first: a store
 * holding a rule the validator rejects is corrupted, and nothing of it is served.
 */
export function compileSnapshotRules(rules: readonly NormalizedRule[]): RuleSet {
  const revalidated = rules.map((rule) => {
    const verdict = validatePodMutation(ruleToResource(rule));
    if (!verdict.valid) {
      throw new StoreError(
        `snapshot rule "${verdict.invalid.name}" fails validation: ${describeIssues(verdict.invalid).join('; ')}`,
        {
          context: { rule: verdict.invalid.name },
        },
      );
    }
    return verdict.rule;
  });
  const names = new Set(revalidated.map((rule) => rule.name));
  if (names.size !== revalidated.length) throw new StoreError('snapshot holds two rules of the same name');
  return compileRuleSet(revalidated);
}
