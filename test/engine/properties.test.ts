import fc from 'fast-check';
import jsonPatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { LIMITS, type NormalizedRule } from '../../lib/api/index.ts';
import { asRecreated, compileRuleSet, reviewPod, STAMP_ANNOTATION } from '../../lib/engine/index.ts';
import type { Pod } from '../../lib/engine/index.ts';
import type { NodeAffinity } from '../../lib/scheduling/index.ts';
import { termFromKubernetes, type Term } from '../../lib/scheduling/index.ts';
import { createPlacementStep } from '../../lib/placement/index.ts';
import { keyedStamps } from '../../lib/stamp/index.ts';
import {
  addedAffinity,
  randomArrival,
  randomNode,
  randomPod,
  randomRule,
  randomRules,
  randomRulesWith,
  overwritesOwnTopology,
  storedByApiServer,
  withNodeTopology,
} from '../support/arbitraries.ts';
import { selectorMatchesNode } from '../../lib/scheduling/semantics.ts';

const RUNS = { numRuns: 400 };
const context = { requestUid: 'uid-property' };
const STAMPS = keyedStamps('property-test-stamp-key-0123456789abcdef');

function review(pod: Pod, rules: readonly NormalizedRule[]) {
  return reviewPod({ pod, namespace: 'production', ruleSet: compileRuleSet(rules), context });
}

function requiredSelector(pod: Pod): readonly Term[] | undefined {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return terms === undefined ? undefined : terms.map(termFromKubernetes);
}

function nodeAffinityOf(pod: Pod): NodeAffinity | undefined {
  return pod.spec?.affinity?.nodeAffinity;
}

describe('engine properties', () => {
  it("emits a patch that applies strictly (RFC 6902) to the incoming Pod and yields exactly the engine's result", () => {
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
        const onlyEmptyOnPod = (before?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).every(
          (term) => termFromKubernetes(term).ids.size === 0,
        );
        const requiredChanged =
          JSON.stringify(required) !== JSON.stringify(before?.requiredDuringSchedulingIgnoredDuringExecution);
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
        for (const entry of preferred)
          expect(
            (entry.preference.matchExpressions?.length ?? 0) + (entry.preference.matchFields?.length ?? 0),
          ).toBeGreaterThan(0);
      }),
      RUNS,
    );
  });

  it('changes nothing on a second review of any Pod as the API server stored it, bound or recreated, with managed placement and another request', () => {
    fc.assert(
      fc.property(
        randomArrival,
        randomRulesWith({ labels: true }),
        fc.integer({ min: 0, max: 100 }),
        (arrival, rules, spotPercent) => {
          const { pod, node, boundAtCreation } = arrival;
          const ruleSet = compileRuleSet(rules);
          const options = {
            stamps: STAMPS,
            managedSteps: [
              createPlacementStep({
                flavour: 'karpenter',
                policies: [
                  { namespace: 'production', kind: 'Deployment', name: 'web', mode: 'Diversity', spotPercent },
                ],
              }),
            ],
          };
          // PodTopologyLabels runs before the webhook on a Pod created bound.
          const incoming = boundAtCreation ? withNodeTopology(pod, node) : pod;
          const first = reviewPod(
            { pod: incoming, namespace: 'production', ruleSet, context: { requestUid: 'uid-first' } },
            options,
          );
          fc.pre(first.decision !== 'denied');
          const stored = storedByApiServer(first.pod, node);
          // The one shape no review can restore: a Pod left unstamped whose own topology label binding overwrote.
          fc.pre(first.pod.metadata?.annotations?.[STAMP_ANNOTATION] !== undefined || !overwritesOwnTopology(arrival));

          for (const again of [stored, asRecreated(stored)]) {
            const second = reviewPod(
              { pod: again, namespace: 'production', ruleSet, context: { requestUid: 'uid-second' } },
              options,
            );
            expect(second.patch).toEqual([]);
            // A Pod bound when it was created is skipped both times; one bound after admission only as it is stored.
            if (again !== stored || boundAtCreation) expect(second.applied).toEqual(first.applied);
          }
        },
      ),
      // PROPERTY_RUNS=60000 for a soak run; 2,000 keep the suite fast.
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
        randomRules.chain((rules) =>
          fc.tuple(
            fc.constant(rules),
            fc.shuffledSubarray(rules, { minLength: rules.length, maxLength: rules.length }),
          ),
        ),
        (pod, [rules, permuted]) => {
          expect(JSON.stringify(review(pod, permuted).patch)).toBe(JSON.stringify(review(pod, rules).patch));
        },
      ),
      RUNS,
    );
  });

  it('selects a node exactly when (selector after removal) AND (added selector) does, by Kubernetes semantics', () => {
    const ruleWithRequired = randomRule('semantic', { selector: false }).filter(
      (rule) =>
        rule.enable && rule.mutationAdd.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution !== undefined,
    );
    fc.assert(
      fc.property(
        randomPod,
        ruleWithRequired,
        fc.array(randomNode, { minLength: 20, maxLength: 20 }),
        (pod, rule, nodes) => {
          const outcome = review(pod, [rule]);
          fc.pre(outcome.decision !== 'denied');
          const { nodeAffinity, ...otherAdds } = rule.mutationAdd;
          const removedOnly = review(pod, [{ ...rule, mutationAdd: otherAdds }]);
          const afterRemoval = requiredSelector(removedOnly.pod);
          const added =
            nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms.map(termFromKubernetes);
          const result = requiredSelector(outcome.pod);
          for (const node of nodes) {
            expect(selectorMatchesNode(result, node)).toBe(
              selectorMatchesNode(afterRemoval, node) && selectorMatchesNode(added, node),
            );
          }
        },
      ),
      RUNS,
    );
  });

  it('adds preferences without losing any that were there ("Preferred terms are appended and deduplicated")', () => {
    fc.assert(
      fc.property(randomPod, addedAffinity, (pod, affinity) => {
        const rule: NormalizedRule = {
          name: 'pref',
          enable: true,
          enforcement: 'enforce',
          priority: 0,
          workloadSelector: {},
          mutationRemove: {},
          mutationAdd: { nodeAffinity: affinity } as NormalizedRule['mutationAdd'],
        };
        const outcome = review(pod, [rule]);
        fc.pre(outcome.decision !== 'denied');
        const ids = (items: NodeAffinity['preferredDuringSchedulingIgnoredDuringExecution']) =>
          new Set((items ?? []).map((item) => `${item.weight}:${termFromKubernetes(item.preference).id}`));
        const result = ids(nodeAffinityOf(outcome.pod)?.preferredDuringSchedulingIgnoredDuringExecution);
        for (const id of ids(nodeAffinityOf(pod)?.preferredDuringSchedulingIgnoredDuringExecution))
          expect(result.has(id)).toBe(true);
        for (const id of ids(affinity.preferredDuringSchedulingIgnoredDuringExecution))
          expect(result.has(id)).toBe(true);
      }),
      RUNS,
    );
  });
});
