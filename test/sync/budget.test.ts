/** One oversized rule cannot stop every rule from syncing. */
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
    const oversized = loadCorpus('invalid').find(({ file }) => file === 'over-rule-budget-values.yaml')!.resource as {
      spec: unknown;
    };
    world.server.put({ metadata: { name: 'oversized' }, spec: oversized.spec });
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('alpha') });
    const subject = syncSubject(world);

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', valid: 1, invalid: 1 });
    expect((await world.store(subject.clusterId).read())?.rules.map((rule) => rule.name)).toEqual(['alpha-pool']);
    expect(acceptedCondition('oversized')).toMatchObject({
      status: 'False',
      message: expect.stringContaining('more than 1024 requirement values, above the per-rule budget') as unknown,
    });
  });

  it('publishes the rules that fit the snapshot budget in application order and rejects the rest, each on its own', async () => {
    const verdict = validatePodMutation(largestRule());
    if (!verdict.valid) throw new Error('the largest rule must be valid');
    const size = ruleCost(verdict.rule).bytes;
    const count = Math.floor(SNAPSHOT_BUDGET.maxRuleBytes / size) + 2;
    const bigNames: string[] = [];
    for (let index = 0; index < count; index += 1) {
      const resource = largestRule(`big-${String(index).padStart(2, '0')}`) as {
        metadata: { name: string };
        spec: unknown;
      };
      bigNames.push(resource.metadata.name);
      world.server.put({ metadata: { name: resource.metadata.name }, spec: resource.spec });
    }
    // Same priority as the big rules and a name before theirs: it applies first.
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('alpha', { priority: -2147483648 }) });
    const subject = syncSubject(world);

    const report = await subject.sync();

    const snapshot = (await world.store(subject.clusterId).read())!;
    const published = snapshot.rules.map((rule) => rule.name);
    const rejected = bigNames.filter((name) => !published.includes(name));
    expect(report).toMatchObject({ outcome: 'published', valid: published.length, invalid: rejected.length });
    expect(published[0]).toBe('alpha-pool');
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected).toEqual(bigNames.slice(bigNames.length - rejected.length));
    expect(snapshot.rules.reduce((total, rule) => total + ruleCost(rule).bytes, 0)).toBeLessThanOrEqual(
      SNAPSHOT_BUDGET.maxRuleBytes,
    );
    for (const name of rejected)
      expect(acceptedCondition(name)).toMatchObject({
        status: 'False',
        message: expect.stringContaining('the snapshot budget') as unknown,
      });
  }, 60_000);

  it('publishes at most the budget’s count of rules and rejects the ones that apply later, naming the count', async () => {
    // Listed (and so status-patched) first, applied last.
    for (const name of ['a-late-0', 'a-late-1'])
      world.server.put({ metadata: { name }, spec: validSpec('late', { priority: 100 }) });
    for (let index = 0; index < SNAPSHOT_BUDGET.maxRules; index += 1)
      world.server.put({ metadata: { name: `r${String(index).padStart(5, '0')}` }, spec: validSpec('general') });
    const subject = syncSubject(world, { source: world.source({ pageSize: 500 }), statusBudgetMs: 1_000 });

    const report = await subject.sync();

    const snapshot = (await world.store(subject.clusterId).read())!;
    expect(report).toMatchObject({ outcome: 'published', valid: SNAPSHOT_BUDGET.maxRules, invalid: 2 });
    expect(snapshot.rules.map((rule) => rule.name)).not.toContain('a-late-0');
    expect(acceptedCondition('a-late-1')).toMatchObject({
      status: 'False',
      message: expect.stringContaining(
        `not published: the snapshot budget of ${SNAPSHOT_BUDGET.maxRules} rules is spent by rules that apply before this one`,
      ) as unknown,
    });
  }, 60_000);

  it('lists the invalid rules in the snapshot by name while they fit its budget, and still reports and marks every one', async () => {
    // 40 misspelt fields a rule: 32 reasons and a count, about 5 KB of reasons each.
    const misspelt = Object.fromEntries(Array.from({ length: 40 }, (_, index) => [`namespace${index}`, ['apps']]));
    const names = Array.from({ length: 150 }, (_, index) => `typo-${String(index).padStart(3, '0')}`);
    for (const name of names)
      world.server.put({
        metadata: { name },
        spec: validSpec('general', { workloadSelector: { namespaces: ['apps'], ...misspelt } }),
      });
    const subject = syncSubject(world, { source: world.source({ pageSize: 500 }) });

    const report = await subject.sync();

    const listed = (await world.store(subject.clusterId).read())!.invalid;
    expect(report).toMatchObject({ outcome: 'published', valid: 0, invalid: names.length });
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.map((invalid) => invalid.name)).toEqual(names.slice(0, listed.length));
    expect(listed.length).toBeLessThan(names.length);
    expect(Buffer.byteLength(JSON.stringify(listed), 'utf8')).toBeLessThanOrEqual(SNAPSHOT_BUDGET.maxInvalidBytes);
    expect(acceptedCondition(names.at(-1)!)).toMatchObject({
      status: 'False',
      message: expect.stringContaining('unknown field') as unknown,
    });
  });
});
