import fc from 'fast-check';
import jsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { LIMITS, type NormalizedRule } from '../../lib/api/index.ts';
import { compileRuleSet, mutatePod } from '../../lib/engine/index.ts';
import type { NodeAffinity, Pod } from '../../lib/kubernetes/index.ts';
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
 * True when a matched rule removes a key that a matched rule adds in a preferred term or a
 * toleration. Preferences and tolerations are lists, not ANDs: on a second pass the removal strips
 * the earlier addition (leaving a residual preference, or moving a toleration to the end) before the
 * add appends it again, so byte-for-byte idempotency cannot hold there under the reference semantics.
 */
function reappliesOwnAdditions(applied: readonly NormalizedRule[]): boolean {
  const removedAffinityKeys = new Set(applied.flatMap((rule) => rule.mutationRemove.nodeAffinity?.keys ?? []));
  const removedTolerationKeys = new Set(applied.flatMap((rule) => rule.mutationRemove.tolerations?.keys ?? []));
  return applied.some(
    (rule) =>
      (rule.mutationAdd.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).some((entry) =>
        (entry.preference.matchExpressions ?? []).some((requirement) => removedAffinityKeys.has(requirement.key)),
      ) || (rule.mutationAdd.tolerations ?? []).some((toleration) => removedTolerationKeys.has(toleration.key ?? '')),
  );
}

describe('engine properties', () => {
  it('emits a patch that applies strictly (RFC 6902) to the incoming Pod and yields exactly the engine\'s result', () => {
    fc.assert(
      fc.property(randomPod, randomRules, (pod, rules) => {
        const outcome = review(pod, rules);
        const wire = JSON.parse(JSON.stringify(outcome.patch));
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
        const required = after!.requiredDuringSchedulingIgnoredDuringExecution;
        const preferred = after!.preferredDuringSchedulingIgnoredDuringExecution ?? [];
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

  it('changes nothing the second time when the same rules match again', () => {
    fc.assert(
      fc.property(randomPod, randomRules, (pod, rules) => {
        const first = review(pod, rules);
        fc.pre(first.decision !== 'denied');
        fc.pre(!reappliesOwnAdditions(rules.filter((rule) => first.applied.includes(rule.name))));
        const second = review(first.pod, rules);
        fc.pre(JSON.stringify(second.applied) === JSON.stringify(first.applied));
        expect(second.patch).toEqual([]);
      }),
      RUNS,
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
        const rule = { name: 'pref', enable: true, priority: 0, workloadSelector: {}, mutationRemove: {}, mutationAdd: { nodeAffinity: affinity } };
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
