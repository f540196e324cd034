import fc from 'fast-check';
import jsonPatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { compileRuleSet, reviewPod, type Pod } from '../../lib/engine/index.ts';
import { randomPod, randomRules } from '../support/arbitraries.ts';
import { pod, rule, rules } from '../support/builders.ts';

const context = { requestUid: 'uid-no-op' };

/** A JSON value as Kubernetes reads it: a null, an empty list and an empty map are the same as an absent field. */
function asKubernetesReads(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asKubernetesReads);
  if (value === null || typeof value !== 'object') return value;
  const kept = Object.entries(value)
    .map(([key, item]) => [key, asKubernetesReads(item)] as const)
    .filter(([, item]) => !(item === null || (typeof item === 'object' && Object.keys(item).length === 0)));
  return Object.fromEntries(kept);
}

describe('patch operations', () => {
  it('each change the Pod as Kubernetes reads it: no operation is a no-op', () => {
    fc.assert(
      fc.property(randomPod, randomRules, (incoming, rules) => {
        const { patch } = reviewPod({
          pod: incoming,
          namespace: 'production',
          ruleSet: compileRuleSet(rules),
          context,
        });
        let document: Pod = structuredClone(incoming);
        for (const operation of JSON.parse(JSON.stringify(patch)) as Operation[]) {
          const next = jsonPatch.applyOperation(structuredClone(document), operation, true, false).newDocument;
          expect(asKubernetesReads(next), `${operation.op} ${operation.path}`).not.toEqual(asKubernetesReads(document));
          document = next;
        }
      }),
      { numRuns: 400 },
    );
  });

  it.each([
    ['tolerations', { tolerations: { keys: ['example.com/spot'] } }],
    ['nodeSelector', { nodeSelector: { keys: ['example.com/pool'] } }],
  ])(
    'leaves a Pod without %s as it is when a rule removes keys from them, recording the rule only',
    (_field, mutationRemove) => {
      const outcome = reviewPod({
        pod: pod(),
        namespace: 'production',
        ruleSet: rules(rule('drop', { mutationRemove })),
        context,
      });

      expect(outcome.patch.map(({ op, path }) => `${op} ${path}`)).toEqual(['add /metadata/annotations']);
    },
  );
});
