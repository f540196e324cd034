/** The engine with a capacity: where a changed Pod fits before and after, and the steps held back because they would strand it. */
import { describe, expect, it } from 'vitest';
import { validatePodMutation, type IfUnschedulable, type NormalizedRule } from '../../lib/api/index.ts';
import { Capacity } from '../../lib/capacity/index.ts';
import { compileRuleSet, reviewPod, type ManagedStep, type MutationOptions, type Pod } from '../../lib/engine/index.ts';
import { podMutation } from '../support/builders.ts';
import { fixtureText } from '../support/fixtures.ts';
import { node, nodePool } from '../capacity/support.ts';
import { IF_UNSCHEDULABLE_ANNOTATION } from '../../lib/api/constants.ts';

const REVIEW = JSON.parse(fixtureText('reviews/deployment-legacy-pool.json')) as {
  request: { namespace: string; object: Pod };
};
const POD = REVIEW.request.object;
const NAMESPACE = REVIEW.request.namespace;
const CONTEXT = { requestUid: 'fit-test' };
const POOL_KEY = 'example.com/node-pool';

// The fixture's Pod requires example.com/node-pool In [legacy] and amd64: a legacy Node takes it.
const CAPACITY = Capacity.of({
  nodes: [node('legacy-1', { [POOL_KEY]: 'legacy', 'kubernetes.io/arch': 'amd64' })],
  nodePools: [nodePool('general', {}, { labels: { [POOL_KEY]: 'general' } })],
});

/** A validated rule moving the Pod to `pool`, with the if-unschedulable annotation when given. */
function moveTo(pool: string, ifUnschedulable?: IfUnschedulable, name = `move-to-${pool}`): NormalizedRule {
  const resource = podMutation(name, {
    mutationRemove: { nodeAffinity: { keys: [POOL_KEY] } },
    mutationAdd: { nodeSelector: { [POOL_KEY]: pool } },
  });
  const annotations = ifUnschedulable === undefined ? {} : { [IF_UNSCHEDULABLE_ANNOTATION]: ifUnschedulable };
  const verdict = validatePodMutation({ ...resource, metadata: { name, annotations } });
  if (!verdict.valid) throw new Error(`test rule ${name} is invalid: ${JSON.stringify(verdict.invalid.issues)}`);
  return verdict.rule;
}

function run(rules: readonly NormalizedRule[], options: MutationOptions = { capacity: CAPACITY }) {
  return reviewPod({ pod: POD, namespace: NAMESPACE, ruleSet: compileRuleSet(rules), context: CONTEXT }, options);
}

describe('the engine with a capacity', () => {
  it('judges a changed Pod before and after: fits a legacy Node, then the general NodePool', () => {
    const outcome = run([moveTo('general')]);
    expect(outcome.decision).toBe('mutated');
    expect(outcome.fit?.before.text()).toBe('fits 1 Node');
    expect(outcome.fit?.after.text()).toBe('fits NodePool general; 0 Nodes');
    expect(outcome.warnings).toEqual([]);
  });

  it('judges nothing without a capacity', () => {
    const outcome = run([moveTo('genral')], {});
    expect(outcome.decision).toBe('mutated');
    expect(outcome.fit).toBeUndefined();
    expect(outcome.warnings).toEqual([]);
  });

  it('judges nothing for a Pod no rule changed', () => {
    const outcome = run([]);
    expect(outcome.decision).toBe('unchanged');
    expect(outcome.fit).toBeUndefined();
  });

  it('applies a warn rule that strands the Pod, and warns first', () => {
    const outcome = run([moveTo('genral')]);
    expect(outcome.decision).toBe('mutated');
    expect(outcome.applied).toEqual(['move-to-genral']);
    expect(outcome.fit?.after.isNewlyUnschedulable(outcome.fit.before)).toBe(true);
    expect(outcome.warnings[0]).toMatch(
      /^the Pod fit before PodMutation move-to-genral and by node labels, taints and cordons now fits nowhere: /,
    );
    expect(outcome.warnings[0]!.length).toBeLessThanOrEqual(255);
  });

  it('holds back a skip rule that would strand the Pod: the Pod is left as it came', () => {
    const outcome = run([moveTo('genral', 'skip')]);
    expect(outcome.decision).toBe('unchanged');
    expect(outcome.patch).toEqual([]);
    expect(outcome.applied).toEqual([]);
    expect(outcome.held?.map((step) => [step.name, step.verdict.kind])).toEqual([['move-to-genral', 'nowhere']]);
    expect(outcome.warnings).toEqual([
      expect.stringMatching(/^PodMutation "move-to-genral" not applied \(if-unschedulable: skip\): with it the Pod/),
    ]);
  });

  it('applies a skip rule whose result still fits', () => {
    const outcome = run([moveTo('general', 'skip')]);
    expect(outcome.applied).toEqual(['move-to-general']);
    expect(outcome.held).toBeUndefined();
  });

  it('applies a skip rule when the Pod fitted nowhere before it: it strands nothing', () => {
    const empty = Capacity.of({ nodePools: [nodePool('other', {}, { labels: { [POOL_KEY]: 'other' } })] });
    const outcome = run([moveTo('genral', 'skip')], { capacity: empty });
    expect(outcome.applied).toEqual(['move-to-genral']);
    expect(outcome.fit?.before.kind).toBe('nowhere');
    expect(outcome.warnings).toEqual([]);
  });

  it('holds back a skip rule after a warn rule, judging it against the state the warn rule left', () => {
    const outcome = run([moveTo('general', undefined, 'a-general'), moveTo('genral', 'skip', 'b-genral')]);
    expect(outcome.applied).toEqual(['a-general']);
    expect(outcome.held?.map((step) => step.name)).toEqual(['b-genral']);
    expect(outcome.fit?.after.text()).toBe('fits NodePool general; 0 Nodes');
  });

  it('holds back a managed step that would strand the Pod, whatever the rules say', () => {
    const stranding: ManagedStep = {
      name: 'managed:test',
      apply: (state) => ({ state: { ...state, nodeSelector: { [POOL_KEY]: 'nowhere' } } }),
    };
    const outcome = run([moveTo('general')], { capacity: CAPACITY, managedSteps: [stranding] });
    expect(outcome.applied).toEqual(['move-to-general']);
    expect(outcome.held?.map((step) => step.subject)).toEqual(['managed step "managed:test"']);
    expect(outcome.fit?.after.fits).toBe(true);
  });

  it('finds an intrinsic contradiction with an unknown capacity, and holds back a skip rule that causes it', () => {
    const contradicting = validatePodMutation({
      ...podMutation('contradict', { mutationAdd: { nodeSelector: { [POOL_KEY]: 'merged' } } }),
      metadata: { name: 'contradict', annotations: { [IF_UNSCHEDULABLE_ANNOTATION]: 'skip' } },
    });
    if (!contradicting.valid) throw new Error('test rule is invalid');
    const outcome = run([contradicting.rule], { capacity: Capacity.unknown() });
    expect(outcome.held?.[0]?.verdict.contradiction).toBeDefined();
    expect(outcome.decision).toBe('unchanged');
  });
});
