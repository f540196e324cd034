/**
 * Where a changed Pod fits, through the admission handler: the capacity the sync publishes in a real DynamoDB snapshot,
 * the warning kubectl prints, the log line's fields and the metrics; a rule saying if-unschedulable: skip held back.
 */
import { describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION, type NormalizedRule } from '../../lib/api/index.ts';
import { Capacity } from '../../lib/capacity/index.ts';
import { createAdmissionHandler } from '../../lib/endpoint/index.ts';
import { type SnapshotContent } from '../../lib/store/index.ts';
import { node } from '../capacity/support.ts';
import { fixtureText } from '../support/fixtures.ts';
import { parseAnswer, parseReview } from '../support/reviews.ts';
import { freshClusterId, placementsOf, snapshotsOf } from '../store/support.ts';
import {
  admissionEvent,
  exampleContent,
  patchedObject,
  recordingLogger,
  recordingMetrics,
  ruleCache,
  TOKEN,
} from './support.ts';
import { useTestTable } from '../support/dynamo.ts';

const REVIEW_TEXT = fixtureText('reviews/deployment-legacy-pool.json');
const POOL = 'example.com/node-pool';
const ARCH = 'kubernetes.io/arch';

// The example rule moves the fixture's Pod from example.com/node-pool In [legacy] to In [merged].
const WITH_MERGED = Capacity.of({
  nodes: [
    node('legacy-1', { [POOL]: 'legacy', [ARCH]: 'amd64' }),
    node('merged-1', { [POOL]: 'merged', [ARCH]: 'amd64' }),
  ],
});
const LEGACY_ONLY = Capacity.of({ nodes: [node('legacy-1', { [POOL]: 'legacy', [ARCH]: 'amd64' })] });

const table = useTestTable();

/** The example rules, the migration marked if-unschedulable: skip when asked. */
async function rules(skip: boolean): Promise<SnapshotContent> {
  const content = await exampleContent();
  const marked = content.rules.map((rule): NormalizedRule =>
    skip && rule.name === 'migrate-legacy-pool' ? { ...rule, ifUnschedulable: 'skip' } : rule,
  );
  return { ...content, rules: marked };
}

/** One review through a handler whose snapshot holds these rules and this published capacity. */
async function admit(content: SnapshotContent) {
  const clusterId = freshClusterId();
  await snapshotsOf({ client: table.client, tableName: table.tableName })(clusterId).publish(content);
  const logger = recordingLogger();
  const metrics = recordingMetrics();
  const handler = createAdmissionHandler({
    rules: ruleCache(
      {
        snapshots: snapshotsOf({ client: table.client, tableName: table.tableName }),
        placements: placementsOf({ client: table.client, tableName: table.tableName }),
      },
      clusterId,
    ),
    acceptedTokens: () => Promise.resolve([TOKEN]),
    logger,
    metrics,
  });
  const result = await handler(admissionEvent({ body: REVIEW_TEXT }));
  const { response } = parseAnswer(result.body ?? '');
  return {
    response,
    pod:
      response.patch === undefined
        ? parseReview(REVIEW_TEXT).request.object
        : patchedObject(parseReview(REVIEW_TEXT), response.patch),
    line: logger.records.find((record) => record.message === 'admission')?.fields,
    metrics: metrics.totals,
  };
}

describe('where a changed Pod fits, through the admission handler', () => {
  it('mutates a Pod that still fits without a warning, and logs where it fits', async () => {
    const { response, line, metrics } = await admit({ ...(await rules(false)), capacity: WITH_MERGED.published()! });

    expect(response.warnings).toBeUndefined();
    expect(line).toMatchObject({ decision: 'mutated', fit: 'fits' });
    expect(line).not.toHaveProperty('unschedulable');
    expect(metrics.get('UnschedulableMutations')).toBeUndefined();
  });

  it('warns when the rules turn a Pod that fit into one that fits nowhere, and logs and counts it', async () => {
    const { response, pod, line, metrics } = await admit({
      ...(await rules(false)),
      capacity: LEGACY_ONLY.published()!,
    });

    expect(pod.metadata?.annotations?.[APPLIED_ANNOTATION]).toBe('migrate-legacy-pool');
    expect(response.warnings?.[0]).toMatch(/^the Pod fit before PodMutation migrate-legacy-pool and .* fits nowhere: /);
    expect(response.warnings?.[0]).toContain('example.com/node-pool');
    expect(line).toMatchObject({ decision: 'mutated', fit: 'nowhere', unschedulable: true });
    expect(metrics.get('UnschedulableMutations')).toBe(1);
  });

  it('admits the Pod unmutated when the stranding rule says if-unschedulable: skip, and says why', async () => {
    const { response, line, metrics } = await admit({ ...(await rules(true)), capacity: LEGACY_ONLY.published()! });

    expect(response.allowed).toBe(true);
    expect(response.patch).toBeUndefined();
    expect(response.warnings).toEqual([
      expect.stringMatching(/^PodMutation "migrate-legacy-pool" not applied \(if-unschedulable: skip\)/),
    ]);
    expect(line).toMatchObject({ decision: 'unchanged', held: ['migrate-legacy-pool'] });
    expect(metrics.get('HeldSteps')).toBe(1);
  });

  it('judges the changed Pod on its own contradictions when the snapshot carries no capacity', async () => {
    const { response, line } = await admit(await rules(false));

    expect(response.warnings).toBeUndefined();
    expect(line).toMatchObject({ decision: 'mutated', fit: 'unknown' });
  });

  it('answers with the rules, judging contradictions only, when the published capacity cannot be read', async () => {
    const { response, line } = await admit({ ...(await rules(false)), capacity: { format: 99 } });

    expect(response.allowed).toBe(true);
    expect(line).toMatchObject({
      decision: 'mutated',
      fit: 'unknown',
      capacityProblem: expect.stringContaining('capacity.format: expected 1, got 99') as unknown,
    });
  });

  it('never reads the capacity for a review that changes no Pod', async () => {
    const { line } = await admit({ ...(await rules(false)), rules: [], capacity: { format: 99 } });

    expect(line).toMatchObject({ decision: 'unchanged' });
    expect(line).not.toHaveProperty('capacityProblem');
    expect(line).not.toHaveProperty('fit');
  });
});
