/** Audit mode in the engine: the same Pod and the same rules, applied when enforced and only recorded when audited. */
import { describe, expect, it } from 'vitest';
import {
  APPLIED_ANNOTATION,
  AUDITED_ANNOTATION,
  validatePodMutation,
  type Enforcement,
  type NormalizedRule,
} from '../../lib/api/index.ts';
import { compileRuleSet, reviewPod, type ManagedStep, type MutationOptions, type Pod } from '../../lib/engine/index.ts';
import { podMutation } from '../support/builders.ts';
import { fixtureText } from '../support/fixtures.ts';
import { ENFORCEMENT_ANNOTATION } from '../../lib/api/constants.ts';

const REVIEW = JSON.parse(fixtureText('reviews/deployment-legacy-pool.json')) as {
  request: { namespace: string; object: Pod };
};
const POD = REVIEW.request.object;
const NAMESPACE = REVIEW.request.namespace;
const CONTEXT = { requestUid: 'audit-test' };

/** A validated rule with the given enforcement annotation (none: the default). */
function ruleWith(
  name: string,
  spec: Record<string, unknown>,
  enforcement?: Enforcement,
  priority = 0,
): NormalizedRule {
  const resource = podMutation(name, { priority, ...spec });
  const metadata =
    enforcement === undefined ? { name } : { name, annotations: { [ENFORCEMENT_ANNOTATION]: enforcement } };
  const verdict = validatePodMutation({ ...resource, metadata });
  if (!verdict.valid) throw new Error(`test rule ${name} is invalid: ${JSON.stringify(verdict.invalid.issues)}`);
  return verdict.rule;
}

const MOVE_POOL = {
  mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
  mutationAdd: { nodeSelector: { 'example.com/node-pool': 'general' } },
};
const TOLERATE_SPOT = {
  mutationAdd: { tolerations: [{ key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' }] },
};

function run(rules: readonly NormalizedRule[], options: MutationOptions = {}, pod: unknown = POD) {
  return reviewPod({ pod, namespace: NAMESPACE, ruleSet: compileRuleSet(rules), context: CONTEXT }, options);
}

function schedulingOf(pod: Pod) {
  return {
    nodeSelector: pod.spec?.nodeSelector,
    tolerations: pod.spec?.tolerations,
    nodeAffinity: pod.spec?.affinity?.nodeAffinity,
  };
}

describe('audit mode in the engine', () => {
  it('applies an enforced rule and changes the Pod', () => {
    const outcome = run([ruleWith('move-pool', MOVE_POOL)]);

    expect(outcome.decision).toBe('mutated');
    expect(outcome.applied).toEqual(['move-pool']);
    expect(outcome.audited).toEqual([]);
    expect(outcome.pod.spec?.nodeSelector).toEqual({ 'example.com/node-pool': 'general' });
  });

  it('leaves the scheduling of the same Pod unchanged when the same rule is audited, and says what enforcing it would change', () => {
    const outcome = run([ruleWith('move-pool', MOVE_POOL, 'audit')]);

    expect(schedulingOf(outcome.pod)).toEqual(schedulingOf(POD));
    expect(outcome.applied).toEqual([]);
    expect(outcome.audited).toEqual([{ name: 'move-pool', operations: 2, fields: ['nodeAffinity', 'nodeSelector'] }]);
  });

  it('records the audited rules that matched in the audited annotation and not in the applied one', () => {
    const outcome = run([ruleWith('move-pool', MOVE_POOL, 'audit')]);

    expect(outcome.pod.metadata?.annotations?.[AUDITED_ANNOTATION]).toBe('move-pool');
    expect(outcome.pod.metadata?.annotations?.[APPLIED_ANNOTATION]).toBeUndefined();
    expect(outcome.patch.map((operation) => operation.path)).toEqual([
      `/metadata/annotations/${AUDITED_ANNOTATION.replace('/', '~1')}`,
    ]);
  });

  it('gives the Pod what it would get if the audited rules did not exist, enforced rules still applied in their order', () => {
    const rules = [
      ruleWith('tolerate-spot', TOLERATE_SPOT, undefined, 10),
      ruleWith('move-pool', MOVE_POOL, 'audit', 5),
    ];

    const mixed = run(rules);
    const withoutAudited = run([rules[0]!]);

    expect(schedulingOf(mixed.pod)).toEqual(schedulingOf(withoutAudited.pod));
    expect(mixed.applied).toEqual(['tolerate-spot']);
    expect(mixed.audited.map((match) => match.name)).toEqual(['move-pool']);
  });

  it('audits every customer rule when the deployment is in audit, whatever each rule says', () => {
    const outcome = run([ruleWith('move-pool', MOVE_POOL, 'enforce'), ruleWith('tolerate-spot', TOLERATE_SPOT)], {
      enforcement: 'audit',
    });

    expect(schedulingOf(outcome.pod)).toEqual(schedulingOf(POD));
    expect(outcome.audited.map((match) => match.name)).toEqual(['move-pool', 'tolerate-spot']);
    expect(outcome.audited[1]).toEqual({ name: 'tolerate-spot', operations: 1, fields: ['tolerations'] });
  });

  it('keeps applying managed steps when the deployment audits every rule', () => {
    const step: ManagedStep = {
      name: 'managed-placement',
      apply: (state) => ({ state: { ...state, nodeSelector: { 'karpenter.sh/capacity-type': 'spot' } } }),
    };

    const outcome = run([ruleWith('tolerate-spot', TOLERATE_SPOT)], { enforcement: 'audit', managedSteps: [step] });

    expect(outcome.applied).toEqual(['managed-placement']);
    expect(outcome.pod.spec?.nodeSelector).toEqual({ 'karpenter.sh/capacity-type': 'spot' });
    expect(outcome.audited.map((match) => match.name)).toEqual(['tolerate-spot']);
  });

  it('records the denial enforcing an audited rule would cause instead of denying the Pod', () => {
    // 8 x 9 disjoint terms combine into 72 required terms, above the limit of 64.
    const wide = Array.from({ length: 17 }, (_, index) => ({
      matchExpressions: [{ key: `k${index}`, operator: 'In', values: ['a'] }],
    }));
    const pod = {
      ...POD,
      spec: {
        ...POD.spec,
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: wide.slice(0, 8) } },
        },
      },
    };
    const adds = {
      mutationAdd: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: wide.slice(8, 17) } },
      },
    };

    const enforced = run([ruleWith('widen', adds)], {}, pod);
    const audited = run([ruleWith('widen', adds, 'audit')], {}, pod);

    expect(enforced.decision).toBe('denied');
    expect(audited.decision).toBe('mutated');
    expect(audited.audited).toEqual([{ name: 'widen', operations: 0, fields: [], denial: enforced.denial?.message }]);
  });

  it('changes nothing on a second review of a Pod it audited', () => {
    const rules = [ruleWith('move-pool', MOVE_POOL, 'audit'), ruleWith('tolerate-spot', TOLERATE_SPOT)];
    const first = run(rules);

    const second = run(rules, {}, first.pod);

    expect(second.decision).toBe('unchanged');
    expect(second.patch).toEqual([]);
    expect(second.audited.map((match) => match.name)).toEqual(['move-pool']);
  });

  it('keeps the names an earlier review recorded in the audited annotation and adds new ones after them', () => {
    const first = run([ruleWith('move-pool', MOVE_POOL, 'audit')]);

    const second = run([ruleWith('tolerate-spot', TOLERATE_SPOT, 'audit')], {}, first.pod);

    expect(second.pod.metadata?.annotations?.[AUDITED_ANNOTATION]).toBe('move-pool,tolerate-spot');
  });
});
