/**
 * `validate`'s warnings: a tolerationsMatch entry that every Pod meets, because the API server's DefaultTolerationSeconds
 * admission plugin gives every Pod its not-ready and unreachable tolerations before webhooks run.
 */
import { describe, expect, it } from 'vitest';
import { ruleWarnings, validatePodMutation, type NormalizedRule } from '../../lib/api/index.ts';
import { reviewPod } from '../../lib/engine/index.ts';
import { pod, podMutation, rules } from '../support/builders.ts';

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const add = { mutationAdd: { annotations: { 'example.com/selected': 'yes' } } };

/** The rule selecting on `entries`, when it is valid. */
function selecting(entries: readonly Record<string, unknown>[]): NormalizedRule | undefined {
  const verdict = validatePodMutation(
    podMutation('selects-tolerations', { workloadSelector: { tolerationsMatch: entries }, ...add }),
  );
  return verdict.valid ? verdict.rule : undefined;
}

// A Pod as it reaches a webhook with no tolerations of its own: the plugin's two.
const DEFAULTS_ONLY = pod({
  namespace: 'production',
  tolerations: [
    { key: NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ],
});

describe('ruleWarnings', () => {
  it.each([
    ['Exists with no key', { operator: 'Exists' }],
    ['Exists for NoExecute with no key', { operator: 'Exists', effect: 'NoExecute' }],
    ['the not-ready key alone', { key: NOT_READY }],
    ['the unreachable key for NoExecute', { key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }],
    [
      "the plugin's own toleration, 300 seconds included",
      { key: NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
  ])('warns about %s, at its field path, as matching every Pod', (_case, entry) => {
    const rule = selecting([{ key: 'example.com/legacy', operator: 'Exists' }, entry])!;

    expect(ruleWarnings(rule)).toEqual([
      {
        field: 'spec.workloadSelector.tolerationsMatch[1]',
        reason: expect.stringMatching(
          /^matches every Pod, so it restricts nothing: the API server's DefaultTolerationSeconds admission plugin gives each Pod the tolerations node\.kubernetes\.io\/not-ready and node\.kubernetes\.io\/unreachable .*; to select every Pod say all: true$/,
        ) as unknown,
      },
    ]);
  });

  it.each([
    ['another key', { key: 'example.com/legacy', operator: 'Exists' }],
    ['Exists for another effect', { operator: 'Exists', effect: 'NoSchedule' }],
    ['the not-ready key with operator Equal', { key: NOT_READY, operator: 'Equal' }],
    ['the not-ready key for an empty effect, which the engine compares as set', { key: NOT_READY, effect: '' }],
    ['other seconds', { key: NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }],
  ])('does not warn about %s', (_case, entry) => {
    expect(ruleWarnings(selecting([entry])!)).toEqual([]);
  });

  it("warns about exactly the entries the engine matches on a Pod that carries only the plugin's tolerations", () => {
    const keys = [undefined, '', NOT_READY, UNREACHABLE, 'example.com/legacy'];
    const operators = [undefined, '', 'Equal', 'Exists'];
    const values = [undefined, '', 'true'];
    const effects = [undefined, '', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'];
    const seconds = [undefined, 300, 60];
    let checked = 0;
    for (const key of keys)
      for (const operator of operators)
        for (const value of values)
          for (const effect of effects)
            for (const tolerationSeconds of seconds) {
              const entry = Object.fromEntries(
                Object.entries({ key, operator, value, effect, tolerationSeconds }).filter(
                  ([, field]) => field !== undefined,
                ),
              );
              const rule = selecting([entry]);
              if (rule === undefined) continue;
              const matched = reviewPod({
                pod: DEFAULTS_ONLY,
                namespace: 'production',
                ruleSet: rules(rule),
                context: { requestUid: 'u' },
              }).applied.includes(rule.name);
              expect([entry, ruleWarnings(rule).length > 0]).toEqual([entry, matched]);
              checked += 1;
            }
    expect(checked).toBeGreaterThan(100);
  });

  it('warns about nothing in a rule without tolerationsMatch', () => {
    const verdict = validatePodMutation(
      podMutation('by-namespace', { workloadSelector: { namespaces: ['production'] }, ...add }),
    );

    expect(verdict.valid && ruleWarnings(verdict.rule)).toEqual([]);
  });
});

describe('a rule that leaves enable out', () => {
  const spec = { workloadSelector: { all: true }, ...add };

  it('is warned about: it is stored disabled', () => {
    const resource = {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'forgot-enable' },
      spec,
    };
    const verdict = validatePodMutation(resource);
    if (!verdict.valid) throw new Error('the rule should be valid');

    expect(verdict.rule.enable).toBe(false);
    expect(ruleWarnings(verdict.rule, resource)).toEqual([
      {
        field: 'spec.enable',
        reason: expect.stringMatching(/^is not set, so the rule is disabled and applied to no Pod/) as unknown,
      },
    ]);
  });

  it.each([true, false])('is not, when enable is %s', (enable) => {
    const resource = {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'says-enable' },
      spec: { ...spec, enable },
    };
    const verdict = validatePodMutation(resource);
    if (!verdict.valid) throw new Error('the rule should be valid');

    expect(ruleWarnings(verdict.rule, resource)).toEqual([]);
  });
});
