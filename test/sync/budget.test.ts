/** Issue #9: one oversized rule cannot stop every rule from syncing. */
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_BUDGET, ruleCost, validatePodMutation } from '../../lib/api/index.ts';
import { loadCorpus } from '../infra/corpus.ts';
import { largestRule } from '../support/largest-rule.ts';
import { syncSubject, useSyncWorld, validSpec } from './support.ts';

const world = useSyncWorld();

function acceptedCondition(name: string): { status: string; message: string } {
  const patch = world.server.statusPatches.findLast((candidate) => candidate.name === name);
  return (patch?.body as { status: { conditions: { status: string; message: string }[] } }).status.conditions[0]!;
}

describe('a sync with rules over a budget', () => {
  it('rejects a rule over the per-rule budget on its own, naming the budget, and publishes every other rule', async () => {
    // As a cluster whose CRD predates the budget stores it: the API server never checked it.
    const oversized = loadCorpus('invalid').find(({ file }) => file === 'over-rule-budget-values.yaml')!.resource as { spec: unknown };
    world.server.put({ metadata: { name: 'oversized' }, spec: oversized.spec });
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('alpha') });
    const subject = syncSubject(world);

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', valid: 1, invalid: 1 });
    expect((await world.store.read(subject.clusterId))?.rules.map((rule) => rule.name)).toEqual(['alpha-pool']);
    expect(acceptedCondition('oversized')).toMatchObject({ status: 'False', message: expect.stringContaining('above the per-rule budget of 1024') as unknown });
  });

  it('publishes the rules that fit the snapshot budget in application order and rejects the rest, each on its own', async () => {
    const verdict = validatePodMutation(largestRule());
    if (!verdict.valid) throw new Error('the largest rule must be valid');
    const size = ruleCost(verdict.rule).bytes;
    const count = Math.floor(SNAPSHOT_BUDGET.maxRuleBytes / size) + 2;
    const bigNames: string[] = [];
    for (let index = 0; index < count; index += 1) {
      const resource = largestRule(`big-${String(index).padStart(2, '0')}`) as { metadata: { name: string }; spec: unknown };
      bigNames.push(resource.metadata.name);
      world.server.put({ metadata: { name: resource.metadata.name }, spec: resource.spec });
    }
    // Same priority as the big rules and a name before theirs: it applies first.
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('alpha', { priority: -2147483648 }) });
    const subject = syncSubject(world);

    const report = await subject.sync();

    const snapshot = (await world.store.read(subject.clusterId))!;
    const published = snapshot.rules.map((rule) => rule.name);
    const rejected = bigNames.filter((name) => !published.includes(name));
    expect(report).toMatchObject({ outcome: 'published', valid: published.length, invalid: rejected.length });
    expect(published[0]).toBe('alpha-pool');
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected).toEqual(bigNames.slice(bigNames.length - rejected.length));
    expect(snapshot.rules.reduce((total, rule) => total + ruleCost(rule).bytes, 0)).toBeLessThanOrEqual(SNAPSHOT_BUDGET.maxRuleBytes);
    for (const name of rejected) expect(acceptedCondition(name)).toMatchObject({ status: 'False', message: expect.stringContaining('the snapshot budget') as unknown });
  }, 60_000);
});
