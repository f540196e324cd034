import type { LabelSelectorRequirement, Toleration } from '../scheduling/index.ts';
import { missingRequirementsText, preferredMatches, requiredMatches } from '../scheduling/index.ts';
import { isRawInteger } from '../json/index.ts';
import type { PodFacts } from './pod.ts';
import type { AffinitySelector, CompiledRule, RuleSet } from './compile.ts';
import { candidatePositions } from './rule-index.ts';

/** The workloadSelector dimension on which a rule stopped matching. */
export type MatchDimension =
  | 'namespaces'
  | 'kinds'
  | 'names'
  | 'labelSelector.matchLabels'
  | 'labelSelector.matchExpressions'
  | 'nodeSelectorMatch'
  | 'tolerationsMatch'
  | 'nodeAffinityMatch.required'
  | 'nodeAffinityMatch.preferred';

function labelRequirementHolds(
  requirement: LabelSelectorRequirement,
  labels: Readonly<Record<string, string>>,
): boolean {
  const value = Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined;
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default:
      return false;
  }
}

// As in Kubernetes, an absent operator means Equal; absent strings compare as empty. Seconds beyond 2^53 are kept as
// their digits (a rule's and a Pod's alike) and compared by them: two such values are two objects.
function tolerationField(toleration: Toleration, field: keyof Toleration): string | number | undefined {
  if (field === 'operator') return toleration.operator || 'Equal';
  if (field === 'tolerationSeconds') {
    const seconds = toleration.tolerationSeconds;
    return isRawInteger(seconds) ? seconds.rawJSON : seconds;
  }
  return toleration[field] ?? '';
}

const TOLERATION_FIELDS: readonly (keyof Toleration)[] = ['key', 'operator', 'value', 'effect', 'tolerationSeconds'];

/** True when the Pod toleration equals the wanted one on every field the wanted one sets. */
function tolerationPresent(wanted: Toleration, present: readonly Toleration[]): boolean {
  const setFields = TOLERATION_FIELDS.filter((field) => wanted[field] !== undefined);
  return present.some((candidate) =>
    setFields.every((field) => tolerationField(candidate, field) === tolerationField(wanted, field)),
  );
}

function affinityFailure(selector: AffinitySelector, facts: PodFacts): MatchDimension | undefined {
  const pod = facts.nodeAffinity;
  if (
    selector.required !== undefined &&
    (pod.required === undefined || !requiredMatches(pod.required, selector.required))
  ) {
    return 'nodeAffinityMatch.required';
  }
  if (selector.preferred.length > 0 && !preferredMatches(pod.preferred, selector.preferred))
    return 'nodeAffinityMatch.preferred';
  return undefined;
}

/**
 * Matches a rule against the original incoming Pod. Returns undefined on a match, else the first
 * dimension that failed, cheapest first. Pure, and allocation-free on the admission hot path;
 * `describeMismatch` turns a dimension into a sentence for `explain`.
 */
export function matchRule(rule: CompiledRule, facts: PodFacts): MatchDimension | undefined {
  const { match } = rule;
  const { workload } = facts;
  if (match.namespaces !== undefined && !match.namespaces.has(workload.namespace)) return 'namespaces';
  if (match.kinds !== undefined && !match.kinds.has(workload.kind)) return 'kinds';
  if (match.names !== undefined && !match.names.has(workload.name)) return 'names';
  for (const [key, value] of match.matchLabels) if (facts.labels[key] !== value) return 'labelSelector.matchLabels';
  for (const requirement of match.labelExpressions)
    if (!labelRequirementHolds(requirement, facts.labels)) return 'labelSelector.matchExpressions';
  for (const [key, value] of match.nodeSelector) if (facts.nodeSelector[key] !== value) return 'nodeSelectorMatch';
  for (const toleration of match.tolerations)
    if (!tolerationPresent(toleration, facts.tolerations)) return 'tolerationsMatch';
  return match.nodeAffinity === undefined ? undefined : affinityFailure(match.nodeAffinity, facts);
}

/**
 * The enabled rules that match the Pod, in application order: only the candidates the rule set's index gives for the
 * Pod's workload are matched, and they are the same rules a scan of every rule finds (a property test checks it). Pure.
 */
export function matchingRules(ruleSet: RuleSet, facts: PodFacts): CompiledRule[] {
  const matched: CompiledRule[] = [];
  for (const position of candidatePositions(ruleSet.index, facts.workload)) {
    const rule = ruleSet.rules[position]!;
    if (matchRule(rule, facts) === undefined) matched.push(rule);
  }
  return matched;
}

/** Says why a rule did not match on the given dimension, for people reading `explain`. */
export function describeMismatch(rule: CompiledRule, facts: PodFacts, dimension: MatchDimension): string {
  const { match } = rule;
  const { workload } = facts;
  switch (dimension) {
    case 'namespaces':
      return `namespace "${workload.namespace}" is not one of ${[...match.namespaces!].join(', ')}`;
    case 'kinds':
      return `workload kind ${workload.kind} is not one of ${[...match.kinds!].join(', ')}`;
    case 'names':
      return `workload name "${workload.name}" is not one of ${[...match.names!].join(', ')}`;
    case 'labelSelector.matchLabels': {
      const [key, value] = match.matchLabels.find(([label, wanted]) => facts.labels[label] !== wanted)!;
      return `label ${key}=${value} is not on the Pod`;
    }
    case 'labelSelector.matchExpressions': {
      const failed = match.labelExpressions.find((requirement) => !labelRequirementHolds(requirement, facts.labels))!;
      return `Pod labels do not satisfy ${failed.key} ${failed.operator}${failed.values === undefined ? '' : ` (${failed.values.join(', ')})`}`;
    }
    case 'nodeSelectorMatch': {
      const [key, value] = match.nodeSelector.find(([label, wanted]) => facts.nodeSelector[label] !== wanted)!;
      return `nodeSelector ${key}=${value} is not on the Pod`;
    }
    case 'tolerationsMatch': {
      const missing = match.tolerations.find((toleration) => !tolerationPresent(toleration, facts.tolerations))!;
      return `toleration ${missing.key || '(any key)'} is not on the Pod`;
    }
    case 'nodeAffinityMatch.required':
      return facts.nodeAffinity.required === undefined
        ? 'the Pod has no required node affinity'
        : `no Pod term holds every requirement of a selector term; the closest lacks ${missingRequirementsText(facts.nodeAffinity.required, match.nodeAffinity!.required!)}`;
    case 'nodeAffinityMatch.preferred':
      return facts.nodeAffinity.preferred.length === 0
        ? 'the Pod has no preferred node affinity'
        : 'a configured preference has no Pod preference of the same weight and term';
  }
}
