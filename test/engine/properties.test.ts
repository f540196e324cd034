import fc from 'fast-check';
import jsonPatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { LIMITS, type NormalizedRule } from '../../lib/api/index.ts';
import { compileRuleSet, mutatePod } from '../../lib/engine/index.ts';
import type { Pod } from '../../lib/engine/index.ts';
import type { NodeAffinity } from '../../lib/scheduling/index.ts';
import { selectorMatchesNode, termFromKubernetes, type Term } from '../../lib/scheduling/index.ts';
import { addedAffinity, randomNode, randomPod, randomRule, randomRules } from '../support/arbitraries.ts';

const RUNS = { numRuns: 400 };
const context = { requestUid: 'uid-property' };

function review(pod: Pod, rules: readonly NormalizedRule[]) {
  return mutatePod(pod, 'production', compileRuleSet(rules), context);
}

function requiredSelector(pod: Pod): readonly Term[] | undefined {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return terms === undefined ? undefined : terms.map(termFromKubernetes);
}

function nodeAffinityOf(pod: Pod): NodeAffinity | undefined {
  return pod.spec?.affinity?.nodeAffinity;
}

/**
 * The README's exceptions to "a second review changes nothing", exactly. Each follows from the reference's
 * processing model, in which a review matches and applies rules to the Pod as it arrives:
 * 1. a matched rule removes a key that a matched rule adds in a preferred term or a toleration: preferences and
 *    tolerations are lists, not ANDs, so the second removal strips the earlier addition (leaving a residual
 *    preference, or moving a toleration to the end) before the add appends it again;
 * 2. the second review matches a rule the first did not: it selects on something an applied rule added;
 * 3. a rule of the first review that the second no longer matches had removed what another applied rule adds
 *    (a key, or all node affinity): without its removal, the addition stays.
 */
function documentedException(rules: readonly NormalizedRule[], first: readonly string[], second: readonly string[]): string | undefined {
  const applied = rules.filter((rule) => first.includes(rule.name));
  const removedAffinityKeys = new Set(applied.flatMap((rule) => rule.mutationRemove.nodeAffinity?.keys ?? []));
  const removedTolerationKeys = new Set(applied.flatMap((rule) => rule.mutationRemove.tolerations?.keys ?? []));
  const listAdditionRemoved = applied.some(
    (rule) =>
      (rule.mutationAdd.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).some((entry) =>
        (entry.preference.matchExpressions ?? []).some((requirement) => removedAffinityKeys.has(requirement.key)),
      ) || (rule.mutationAdd.tolerations ?? []).some((toleration) => removedTolerationKeys.has(toleration.key ?? '')),
  );
  if (listAdditionRemoved) return 'a removal of a key added to a list';
  if (second.some((name) => !first.includes(name))) return 'a rule matching what another added';
  const dropped = applied.filter((rule) => !second.includes(rule.name));
  const undoes = (remover: NormalizedRule, adder: NormalizedRule): boolean => {
    const { mutationRemove: remove } = remover;
    const { mutationAdd: add } = adder;
    const affinityKeys = [add.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [], (add.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((entry) => entry.preference)]
      .flat()
      .flatMap((term) => (term.matchExpressions ?? []).map((requirement) => requirement.key));
    return (
      (add.nodeAffinity !== undefined && remove.nodeAffinity?.all === true) ||
      affinityKeys.some((key) => remove.nodeAffinity?.keys?.includes(key) === true) ||
      Object.keys(add.nodeSelector ?? {}).some((key) => remove.nodeSelector?.keys.includes(key) === true) ||
      (add.tolerations ?? []).some((toleration) => remove.tolerations?.keys.includes(toleration.key ?? '') === true)
    );
  };
  if (dropped.some((remover) => applied.some((adder) => adder !== remover && undoes(remover, adder)))) return 'a dropped rule that undid an addition';
  return undefined;
}

describe('engine properties', () => {
  it('emits a patch that applies strictly (RFC 6902) to the incoming Pod and yields exactly the engine\'s result', () => {
    fc.assert(
      fc.property(randomPod, randomRules, (pod, rules) => {
        const outcome = review(pod, rules);
        const wire = JSON.parse(JSON.stringify(outcome.patch)) as Operation[];
        const patched = jsonPatch.applyPatch(structuredClone(pod), wire, true, false).newDocument;
        expect(patched).toEqual(outcome.pod);
      }),
      RUNS,
    );
  });

  it('never emits an empty term, a required selector without terms, or more than the combined limits', () => {
    fc.assert(
      fc.property(randomPod, randomRules, (pod, rules) => {
        const outcome = review(pod, rules);
        fc.pre(outcome.decision === 'mutated');
        const before = nodeAffinityOf(pod);
        const after = nodeAffinityOf(outcome.pod);
        fc.pre(after !== before && after !== undefined);
        const required = after.requiredDuringSchedulingIgnoredDuringExecution;
        const preferred = after.preferredDuringSchedulingIgnoredDuringExecution ?? [];
        const onlyEmptyOnPod = (before?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).every((term) => termFromKubernetes(term).ids.size === 0);
        const requiredChanged = JSON.stringify(required) !== JSON.stringify(before?.requiredDuringSchedulingIgnoredDuringExecution);
        if (required !== undefined && requiredChanged) {
          expect(required.nodeSelectorTerms.length).toBeGreaterThan(0);
          expect(required.nodeSelectorTerms.length).toBeLessThanOrEqual(LIMITS.combinedRequiredTerms);
          for (const term of required.nodeSelectorTerms) {
            const size = (term.matchExpressions?.length ?? 0) + (term.matchFields?.length ?? 0);
            // The one allowed exception: a Pod whose selector has only empty terms keeps it ("keep it that way").
            if (!onlyEmptyOnPod) expect(size).toBeGreaterThan(0);
            expect(size).toBeLessThanOrEqual(LIMITS.combinedRequirementsPerTerm);
          }
        }
        expect(preferred.length).toBeLessThanOrEqual(LIMITS.combinedPreferredTerms);
        for (const entry of preferred) expect((entry.preference.matchExpressions?.length ?? 0) + (entry.preference.matchFields?.length ?? 0)).toBeGreaterThan(0);
      }),
      RUNS,
    );
  });

  it('changes nothing on a second review of the Pod it mutated, but in the README\'s documented exceptions', () => {
    fc.assert(
      fc.property(randomPod, randomRules, (pod, rules) => {
        const first = review(pod, rules);
        fc.pre(first.decision !== 'denied');
        const second = review(first.pod, rules);
        fc.pre(documentedException(rules, first.applied, second.applied) === undefined);
        expect(second.patch).toEqual([]);
      }),
      // PROPERTY_RUNS=50000 for a soak run; 2,000 keep the suite fast.
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 2000) },
    );
  });

  it('gives the same bytes whatever the order of the rule list', () => {
    fc.assert(
      fc.property(randomPod, randomRules, fc.context(), (pod, rules, ctx) => {
        const shuffled = [...rules].reverse();
        ctx.log(shuffled.map((rule) => rule.name).join(','));
        expect(JSON.stringify(review(pod, shuffled).patch)).toBe(JSON.stringify(review(pod, rules).patch));
      }),
      RUNS,
    );
  });

  it('gives the same bytes for any permutation of the rule list', () => {
    fc.assert(
      fc.property(
        randomPod,
        randomRules.chain((rules) => fc.tuple(fc.constant(rules), fc.shuffledSubarray(rules, { minLength: rules.length, maxLength: rules.length }))),
        (pod, [rules, permuted]) => {
          expect(JSON.stringify(review(pod, permuted).patch)).toBe(JSON.stringify(review(pod, rules).patch));
        },
      ),
      RUNS,
    );
  });

  it('selects a node exactly when (selector after removal) AND (added selector) does, by Kubernetes semantics', () => {
    const ruleWithRequired = randomRule('semantic', { selector: false }).filter(
      (rule) => rule.enable && rule.mutationAdd.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution !== undefined,
    );
    fc.assert(
      fc.property(randomPod, ruleWithRequired, fc.array(randomNode, { minLength: 20, maxLength: 20 }), (pod, rule, nodes) => {
        const outcome = review(pod, [rule]);
        fc.pre(outcome.decision !== 'denied');
        const { nodeAffinity, ...otherAdds } = rule.mutationAdd;
        const removedOnly = review(pod, [{ ...rule, mutationAdd: otherAdds }]);
        const afterRemoval = requiredSelector(removedOnly.pod);
        const added = nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms.map(termFromKubernetes);
        const result = requiredSelector(outcome.pod);
        for (const node of nodes) {
          expect(selectorMatchesNode(result, node)).toBe(selectorMatchesNode(afterRemoval, node) && selectorMatchesNode(added, node));
        }
      }),
      RUNS,
    );
  });

  it('adds preferences without losing any that were there ("Preferred terms are appended and deduplicated")', () => {
    fc.assert(
      fc.property(randomPod, addedAffinity, (pod, affinity) => {
        const rule: NormalizedRule = { name: 'pref', enable: true, enforcement: 'enforce', priority: 0, workloadSelector: {}, mutationRemove: {}, mutationAdd: { nodeAffinity: affinity } as NormalizedRule['mutationAdd'] };
        const outcome = review(pod, [rule]);
        fc.pre(outcome.decision !== 'denied');
        const ids = (items: NodeAffinity['preferredDuringSchedulingIgnoredDuringExecution']) =>
          new Set((items ?? []).map((item) => `${item.weight}:${termFromKubernetes(item.preference).id}`));
        const result = ids(nodeAffinityOf(outcome.pod)?.preferredDuringSchedulingIgnoredDuringExecution);
        for (const id of ids(nodeAffinityOf(pod)?.preferredDuringSchedulingIgnoredDuringExecution)) expect(result.has(id)).toBe(true);
        for (const id of ids(affinity.preferredDuringSchedulingIgnoredDuringExecution)) expect(result.has(id)).toBe(true);
      }),
      RUNS,
    );
  });
});
