/**
 * What a rule's own fields say about where the Pods it changes can run, before any Pod or Node is seen: an added term
 * that no node can satisfy (an error), and an added term that excludes what the rule's own match keeps on every Pod it
 * selects (a warning). kube-scheduler ANDs a Pod's nodeSelector with each of its ORed required terms, and the engine
 * ANDs each added term with each term the Pod keeps (lib/scheduling andTerms), so both follow from the rule alone.
 */
import { Placement, type Capacity } from '../capacity/index.ts';
import { term, termFromKubernetes, type Term, type Toleration } from '../scheduling/index.ts';
import type { Issue, IssueSink } from '../json/index.ts';
import type { NormalizedRule } from './types.ts';

const ADDED_TERMS = 'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms';
// Tolerates every taint: what a rule adds is judged on node labels, since the Pods' own tolerations are unknown here.
const ANY_TAINT: readonly Toleration[] = [{ operator: 'Exists' }];

/** The required terms a rule adds, as the engine reads them. */
function addedTerms(rule: NormalizedRule): readonly Term[] {
  const terms = rule.mutationAdd.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  return terms.map((source) => termFromKubernetes(source));
}

/** Why `required` (one term) cannot hold with `nodeSelector` on any node, or undefined when some node could hold it. */
function conflictOf(nodeSelector: Readonly<Record<string, string>>, required: Term): string | undefined {
  return Placement.of({
    nodeSelector,
    nodeAffinity: { required: [required], preferred: [] },
    tolerations: [],
  }).contradiction()?.terms[0]?.reason;
}

/**
 * Adds an issue for each added required term that cannot hold on any node, alone or with the added nodeSelector:
 * every Pod given it could run nowhere by that term, in any cluster, so the rule is invalid rather than applied.
 */
export function checkAddedTerms(rule: NormalizedRule, issues: IssueSink): void {
  const nodeSelector = rule.mutationAdd.nodeSelector ?? {};
  addedTerms(rule).forEach((added, index) => {
    const reason = conflictOf(nodeSelector, added);
    if (reason === undefined) return;
    issues.add(
      `${ADDED_TERMS}[${index}]`,
      `can match no node (${reason}), so a Pod given it could run nowhere by this term; fix or drop the term`,
    );
  });
}

/** The nodeSelector pairs every Pod the rule selects keeps after it: matched, not removed, not overwritten by the add. */
function keptSelector(rule: NormalizedRule): Record<string, string> {
  const removed = new Set(rule.mutationRemove.nodeSelector?.keys ?? []);
  const added = rule.mutationAdd.nodeSelector ?? {};
  return Object.fromEntries(
    Object.entries(rule.workloadSelector.nodeSelectorMatch ?? {}).filter(
      ([key]) => !removed.has(key) && !Object.hasOwn(added, key),
    ),
  );
}

/** Each nodeAffinityMatch term's requirements on keys the rule does not remove: what the matched Pod term keeps. */
function keptMatchTerms(rule: NormalizedRule): readonly Term[] {
  const remove = rule.mutationRemove.nodeAffinity;
  if (remove?.all === true) return [];
  const removed = new Set(remove?.keys ?? []);
  const terms =
    rule.workloadSelector.nodeAffinityMatch?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  return terms.map((source) => {
    const matched = termFromKubernetes(source);
    return term(matched.expressions.filter((requirement) => !removed.has(requirement.key)));
  });
}

/**
 * Warnings for each added term that cannot hold with what the rule's own match keeps on the Pods it selects: a
 * nodeSelector pair of nodeSelectorMatch it neither removes nor overwrites (then every such Pod fits nowhere by that
 * term), or the requirements of a nodeAffinityMatch term it does not remove (then the Pod's matched term is lost; its
 * other terms may remain). A warning, not an error: admission judges each Pod (docs/api.md, "At admission").
 */
export function matchConflictWarnings(rule: NormalizedRule): Issue[] {
  const ownSelector = rule.mutationAdd.nodeSelector ?? {};
  const kept = keptSelector(rule);
  const matchTerms = keptMatchTerms(rule);
  const warnings: Issue[] = [];
  addedTerms(rule).forEach((added, index) => {
    if (conflictOf(ownSelector, added) !== undefined) return; // an error already (checkAddedTerms)
    const field = `${ADDED_TERMS}[${index}]`;
    const selectorReason = conflictOf({ ...ownSelector, ...kept }, added);
    if (selectorReason !== undefined) {
      warnings.push({
        field,
        reason: `cannot hold with the nodeSelector every Pod this rule selects keeps (spec.workloadSelector.nodeSelectorMatch, not removed): ${selectorReason}; those Pods would fit nowhere. Remove the key with mutationRemove.nodeSelector.keys, or change the term`,
      });
      return;
    }
    matchTerms.forEach((matched, matchIndex) => {
      const reason = conflictOf(ownSelector, term([...matched.expressions, ...added.expressions], added.fields));
      if (reason === undefined) return;
      warnings.push({
        field,
        reason: `cannot hold with the requirements of spec.workloadSelector.nodeAffinityMatch term ${matchIndex} that the rule keeps: ${reason}; the Pod term it matches would select no node. Remove the key with mutationRemove.nodeAffinity.keys, or change the term`,
      });
    });
  });
  return warnings;
}

/**
 * Why every Pod a rule changes would fit nowhere by what it adds alone, judged against `capacity` on node labels (as
 * addedPlacement); undefined when some Node or NodePool takes the additions, the rule adds no node constraint, or the
 * capacity is unknown. The one wording of `validate --capacity`'s warning and the sync's Schedulable condition.
 */
export function additionsStrand(rule: NormalizedRule, capacity: Pick<Capacity, 'judge'>): string | undefined {
  const placement = addedPlacement(rule);
  const verdict = placement === undefined ? undefined : capacity.judge(placement);
  if (verdict?.kind !== 'nowhere') return undefined;
  return `by node labels, what the rule adds ${verdict.text()}, so every Pod it changes would fit nowhere (a misspelt value, or a NodePool not created yet?)`;
}

/**
 * Where the Pods a rule changes could run by what it adds alone (its nodeSelector and required terms), judged on node
 * labels: every taint tolerated, since the Pods' own tolerations are not known. Undefined when the rule adds neither.
 */
function addedPlacement(rule: NormalizedRule): Placement | undefined {
  const nodeSelector = rule.mutationAdd.nodeSelector ?? {};
  const terms = addedTerms(rule);
  if (terms.length === 0 && Object.keys(nodeSelector).length === 0) return undefined;
  return Placement.of({
    nodeSelector,
    nodeAffinity: { required: terms.length === 0 ? undefined : terms, preferred: [] },
    tolerations: ANY_TAINT,
  });
}
