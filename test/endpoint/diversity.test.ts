/**
 * Diversity through the admission handler: the rules, the policy and the counters in a real DynamoDB (dynalite), each
 * Diversity Pod numbered by one UpdateItem before its review; a dry run, a counter that fails or is late draws at
 * random, with a warning and DiversityFallbacks.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createAdmissionHandler } from '../../lib/endpoint/index.ts';
import { STAMP_ANNOTATION, type Pod } from '../../lib/engine/index.ts';
import { CAPACITY_ANNOTATION } from '../../lib/placement/index.ts';
import { sequenceChoice } from '../../lib/placement/sequence.ts';
import { keyedStamps } from '../../lib/stamp/index.ts';
import { createDynamoClient, type DiversityCounterStore } from '../../lib/store/index.ts';
import { admissionReview, pod } from '../support/builders.ts';
import { parseAnswer } from '../support/reviews.ts';
import { countersOf, freshClusterId, placementsOf, silentEndpoint, snapshotsOf } from '../store/support.ts';
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

const COST = 'controller.kubernetes.io/pod-deletion-cost';
const KEY = 'StampKeyOfTheDiversityTest0123456789abcdefghijklmnopqrstuvwxyzAB';
const RANDOM = /^managed capacity placement \(Diversity\): Spot or on-demand was drawn at random for this Pod, since /;

const table = useTestTable();
let clusterId: string;
let cache: SnapshotCache<AdmissionRules>;

beforeAll(async () => {
  clusterId = freshClusterId();
  await snapshotsOf({ client: table.client, tableName: table.tableName })(clusterId).publish(await exampleContent());
  await placementsOf({ client: table.client, tableName: table.tableName })(clusterId).setPlacement({
    namespace: 'shop',
    kind: 'Deployment',
    name: 'web',
    mode: 'Diversity',
    spotPercent: 70,
    minOnDemand: 2,
  });
  cache = ruleCache(
    {
      snapshots: snapshotsOf({ client: table.client, tableName: table.tableName }),
      placements: placementsOf({ client: table.client, tableName: table.tableName }),
    },
    clusterId,
  );
});

const webPod = (hash = '5d8f7c9b4') =>
  pod({
    namespace: 'shop',
    owner: { kind: 'ReplicaSet', name: `web-${hash}` },
    labels: { app: 'web', 'pod-template-hash': hash },
  });

function handlerWith(counters: Pick<DiversityCounterStore, 'next'> | undefined, deadlineMs?: number) {
  const logger = recordingLogger();
  const metrics = recordingMetrics();
  const handler = createAdmissionHandler({
    rules: cache,
    acceptedTokens: () => Promise.resolve([TOKEN]),
    logger,
    metrics,
    stamps: () => Promise.resolve(keyedStamps(KEY)),
    ...(counters === undefined ? {} : { diversityCounters: counters }),
    ...(deadlineMs === undefined ? {} : { sequenceDeadlineMs: deadlineMs }),
  });
  /** One review of the Pod: the admitted Pod, the response's warnings. */
  const admit = async (input: Pod, overrides: Record<string, unknown> = {}) => {
    const review = admissionReview(input, { uid: crypto.randomUUID(), ...overrides });
    const result = await handler(admissionEvent({ body: JSON.stringify(review) }));
    const { response } = parseAnswer(result.body ?? '');
    return {
      pod: response.patch === undefined ? input : patchedObject(review as { request: { object: Pod } }, response.patch),
      warnings: response.warnings ?? [],
    };
  };
  return { admit, logger, metrics: metrics.totals };
}

const capacityOf = (admitted: { pod: Pod }) => admitted.pod.metadata?.annotations?.[CAPACITY_ANNOTATION];

describe('Diversity through the admission handler', () => {
  it('numbers the Pods of a revision from 0, so that every prefix holds the split and the first two are on-demand', async () => {
    const { admit, metrics } = handlerWith(countersOf({ client: table.client, tableName: table.tableName })(clusterId));
    const admitted = [];
    for (let index = 0; index < 10; index += 1) admitted.push(await admit(webPod()));

    expect(admitted.map(capacityOf)).toEqual(
      Array.from({ length: 10 }, (_, k) => sequenceChoice(k, { spotPercent: 70, minOnDemand: 2 })),
    );
    expect(admitted.slice(0, 2).map(capacityOf)).toEqual(['on-demand', 'on-demand']);
    expect(admitted.filter((one) => capacityOf(one) === 'spot')).toHaveLength(7);
    expect(admitted.map((one) => one.pod.metadata?.annotations?.[COST])).toEqual(
      Array.from({ length: 10 }, (_, k) => String(2_147_483_647 - k)),
    );
    expect(admitted.flatMap((one) => one.warnings)).toEqual([]);
    expect(metrics.get('DiversityFallbacks')).toBeUndefined();
  });

  it('starts the next revision of a rolling update at 0', async () => {
    const { admit } = handlerWith(countersOf({ client: table.client, tableName: table.tableName })(clusterId));
    const first = await admit(webPod('7f6e5d4c3'));
    expect(first.pod.metadata?.annotations?.[COST]).toBe('2147483647');
  });

  it('takes no number for a stamped Pod reviewed again, and changes nothing', async () => {
    const counters = countersOf({ client: table.client, tableName: table.tableName })(clusterId);
    const { admit } = handlerWith(counters);
    const first = await admit(webPod('a1b2c3d4e5'));
    expect(first.pod.metadata?.annotations?.[STAMP_ANNOTATION]).toBeDefined();
    const again = await admit(first.pod);
    expect(again.pod).toEqual(first.pod);
    expect(await counters.next('shop/Deployment/web#a1b2c3d4e5')).toBe(1);
  });

  it('draws a dry run at random, says so, counts it, and takes no number', async () => {
    const counters = countersOf({ client: table.client, tableName: table.tableName })(clusterId);
    const { admit, metrics } = handlerWith(counters);
    const dry = await admit(webPod('dd11ee22ff'), { dryRun: true });
    expect(capacityOf(dry)).toMatch(/^(spot|on-demand)$/);
    expect(dry.warnings).toEqual([
      'managed capacity placement (Diversity): Spot or on-demand was drawn at random for this Pod, since the request is a dry run, which takes no number',
    ]);
    expect(metrics.get('DiversityFallbacks')).toBe(1);
    expect(await counters.next('shop/Deployment/web#dd11ee22ff')).toBe(0);
  });

  it('draws at random within the deadline when the counter does not answer, and logs why', async () => {
    const silent = await silentEndpoint();
    const unanswered = createDynamoClient({ endpoint: silent.endpoint, maxAttempts: 1 });
    try {
      const { admit, metrics, logger } = handlerWith(
        countersOf({ client: unanswered, tableName: table.tableName })(clusterId),
        100,
      );
      const started = performance.now();
      const admitted = await admit(webPod());
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(capacityOf(admitted)).toMatch(/^(spot|on-demand)$/);
      expect(admitted.pod.metadata?.annotations?.[COST]).toBeUndefined();
      expect(admitted.warnings).toEqual([expect.stringMatching(RANDOM)]);
      expect(admitted.warnings[0]).toMatch(/the counter of the workload's Pods did not answer within 100 ms$/);
      expect(metrics.get('DiversityFallbacks')).toBe(1);
      expect(logger.records.find((record) => record.message === 'admission')?.fields).toMatchObject({
        diversityFallback: "the counter of the workload's Pods did not answer within 100 ms",
        errorName: 'StoreError',
      });
    } finally {
      unanswered.destroy();
      await silent.close();
    }
  });

  it('draws at random when the counter fails', async () => {
    const { admit, metrics } = handlerWith({ next: () => Promise.reject(new Error('throttled')) });
    const admitted = await admit(webPod());
    expect(admitted.warnings).toEqual([
      "managed capacity placement (Diversity): Spot or on-demand was drawn at random for this Pod, since the counter of the workload's Pods failed",
    ]);
    expect(metrics.get('DiversityFallbacks')).toBe(1);
  });

  it('takes no number for a Pod whose workload has no Diversity policy', async () => {
    let calls = 0;
    const { admit } = handlerWith({
      next: () => {
        calls += 1;
        return Promise.resolve(0);
      },
    });
    await admit(pod({ namespace: 'shop', owner: { kind: 'ReplicaSet', name: 'api-5d8f7c9b4' } }));
    expect(calls).toBe(0);
  });
});
