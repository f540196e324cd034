/**
 * Audit mode through the handler: the same Pod and the same rules from a real DynamoDB snapshot, applied
 * by a deployment that enforces, and only logged and counted (AuditedMatches) by one that audits.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION, AUDITED_ANNOTATION, type Enforcement } from '../../lib/api/index.ts';
import { createAdmissionHandler } from '../../lib/endpoint/index.ts';
import { fixtureText } from '../support/fixtures.ts';
import { parseAnswer, parseReview } from '../support/reviews.ts';
import { freshClusterId, snapshotsOf, placementsOf } from '../store/support.ts';
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
import { type AdmissionRules } from '../../lib/endpoint/admission-rules.ts';
import { type SnapshotCache } from '../../lib/endpoint/snapshot-cache.ts';

const REVIEW_TEXT = fixtureText('reviews/deployment-legacy-pool.json');

const table = useTestTable();
let cache: SnapshotCache<AdmissionRules>;

beforeAll(async () => {
  const clusterId = freshClusterId();
  await snapshotsOf({ client: table.client, tableName: table.tableName })(clusterId).publish(await exampleContent());
  cache = ruleCache(
    {
      snapshots: snapshotsOf({ client: table.client, tableName: table.tableName }),
      placements: placementsOf({ client: table.client, tableName: table.tableName }),
    },
    clusterId,
  );
});

/** One review through a handler of the given deployment enforcement: the admitted Pod, the log line and the metrics. */
async function admit(enforcement: Enforcement) {
  const logger = recordingLogger();
  const metrics = recordingMetrics();
  const handler = createAdmissionHandler({
    rules: cache,
    acceptedTokens: () => Promise.resolve([TOKEN]),
    logger,
    metrics,
    enforcement,
  });
  const result = await handler(admissionEvent({ body: REVIEW_TEXT }));
  const { response } = parseAnswer(result.body ?? '');
  const pod = patchedObject(parseReview(REVIEW_TEXT), response.patch);
  return {
    pod,
    line: logger.records.find((record) => record.message === 'admission')?.fields,
    metrics: metrics.totals,
  };
}

describe('audit mode through the admission handler', () => {
  it('applies the matching example rule when the deployment enforces', async () => {
    const { pod, line, metrics } = await admit('enforce');

    expect(pod.metadata?.annotations?.[APPLIED_ANNOTATION]).toBe('migrate-legacy-pool');
    expect(line).toMatchObject({ decision: 'mutated', rules: ['migrate-legacy-pool'] });
    expect(line).not.toHaveProperty('audited');
    expect(metrics.get('AuditedMatches')).toBeUndefined();
  });

  it('admits the same Pod with its scheduling unchanged when the deployment audits, and logs what the rule would change', async () => {
    const original = parseReview(REVIEW_TEXT).request.object;

    const { pod, line } = await admit('audit');

    expect(pod.spec).toEqual(original.spec);
    expect(pod.metadata?.annotations?.[AUDITED_ANNOTATION]).toBe('migrate-legacy-pool');
    expect(pod.metadata?.annotations?.[APPLIED_ANNOTATION]).toBeUndefined();
    expect(line).toMatchObject({
      rules: [],
      audited: [{ name: 'migrate-legacy-pool', fields: expect.arrayContaining(['nodeAffinity']) as unknown }],
    });
  });

  it('counts each audited rule that matched in AuditedMatches', async () => {
    const { metrics } = await admit('audit');

    expect(metrics.get('AuditedMatches')).toBe(1);
    expect(metrics.get('Admissions')).toBe(1);
  });
});
