import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answerAdmissionReview, type AdmissionReviewResponse } from '../../lib/admission/index.ts';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import { compileRuleSet, type Pod } from '../../lib/engine/index.ts';
import { createAdmissionHandler, readAdmissionConfig } from '../../lib/endpoint/index.ts';
import { CAPACITY_ANNOTATION, type CapacityFlavour, type PlacementPolicy } from '../../lib/placement/index.ts';
import type { NodeSelectorTerm } from '../../lib/scheduling/index.ts';
import { type PlacementStore, type SnapshotStore } from '../../lib/store/index.ts';
import { fixtureText } from '../support/fixtures.ts';
import { parseReview } from '../support/reviews.ts';
import {
  TOKEN,
  admissionEvent,
  exampleContent,
  patchedObject,
  recordingLogger,
  recordingMetrics,
  ruleCache,
} from '../endpoint/support.ts';
import {
  countingClient,
  countsSince,
  freshClusterId,
  startLink,
  snapshotsOf,
  placementsOf,
  type PerCluster,
} from '../store/support.ts';
import { useTestTable } from '../support/dynamo.ts';

// The review's Pod belongs to Deployment production/checkout; the example rule migrate-legacy-pool matches it.
const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const CHECKOUT = { namespace: 'production', kind: 'Deployment', name: 'checkout' } as const;
const START = Date.parse('2026-12-01T10:00:00.000Z');
const REFRESH_SECONDS = 30;
const SPOT = { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] };

const table = useTestTable();
let publisher: PerCluster<SnapshotStore>;
let operator: PerCluster<PlacementStore>;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  publisher = snapshotsOf({ client: table.client, tableName: table.tableName });
  operator = placementsOf({ client: table.client, tableName: table.tableName });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function checkout(mode: PlacementPolicy['mode'], spotPercent?: number): PlacementPolicy {
  return { ...CHECKOUT, mode, ...(spotPercent === undefined ? {} : { spotPercent }) };
}

/** A handler over the example rules of a fresh cluster, reading through a cuttable link on a fake clock. */
async function admission(options: { capacityFlavour?: CapacityFlavour; placements?: readonly PlacementPolicy[] } = {}) {
  const clusterId = freshClusterId();
  await publisher(clusterId).publish(await exampleContent());
  if (options.placements !== undefined) await operator(clusterId).replacePlacements(options.placements);
  const link = await startLink(table.endpoint);
  const { client, counts } = countingClient({ endpoint: link.endpoint, maxAttempts: 1, requestTimeoutMs: 1_000 });
  cleanups.push(
    () => client.destroy(),
    () => link.close(),
  );
  let now = START;
  const stores = {
    snapshots: snapshotsOf({ client, tableName: table.tableName }),
    placements: placementsOf({ client, tableName: table.tableName }),
  };
  const cache = ruleCache(stores, clusterId, {
    clock: () => now,
    refreshSeconds: REFRESH_SECONDS,
    ...(options.capacityFlavour === undefined ? {} : { capacityFlavour: options.capacityFlavour }),
  });
  const logger = recordingLogger();
  const metrics = recordingMetrics();
  const handler = createAdmissionHandler({
    rules: cache,
    acceptedTokens: () => Promise.resolve([TOKEN]),
    logger,
    metrics,
  });
  const admit = async () => {
    const result = await handler(admissionEvent({ body: REVIEW }));
    // A 500 answer carries an error body, with no response.
    const { response } = JSON.parse(result.body ?? '{}') as Partial<AdmissionReviewResponse>;
    return {
      statusCode: result.statusCode,
      body: result.body,
      pod: response?.patch === undefined ? undefined : patchedObject(parseReview(REVIEW), response.patch),
    };
  };
  return {
    clusterId,
    cache,
    counts,
    link,
    logger,
    metrics,
    admit,
    advance: (seconds: number) => void (now += seconds * 1000),
  };
}

function requiredTerms(pod: Pod | undefined): readonly NodeSelectorTerm[] {
  const terms = pod?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms === undefined) throw new Error('the admitted Pod has no required node selector terms');
  return terms;
}

describe('the admission handler applies placement policies from the store', () => {
  it('applies a Spot policy set in the store after the next refresh, listing managed:capacity as applied', async () => {
    const { clusterId, admit, advance } = await admission();
    await admit();
    await operator(clusterId).setPlacement(checkout('Spot'));
    advance(REFRESH_SECONDS);

    const { pod } = await admit();

    expect(requiredTerms(pod)).toEqual([{ matchExpressions: expect.arrayContaining([SPOT]) as unknown }]);
    expect(pod?.metadata?.annotations?.[APPLIED_ANNOTATION]).toBe('migrate-legacy-pool,managed:capacity');
  });

  it('keeps serving the placements it has until a refresh is due', async () => {
    const { clusterId, admit, advance } = await admission();
    await admit();
    await operator(clusterId).setPlacement(checkout('Spot'));
    advance(REFRESH_SECONDS - 1);

    const { pod } = await admit();

    expect(pod?.metadata?.annotations?.[APPLIED_ANNOTATION]).toBe('migrate-legacy-pool');
  });

  it('stops applying a policy after it is deleted and the cache refreshes', async () => {
    const { clusterId, admit, advance } = await admission({ placements: [checkout('Spot')] });
    await admit();
    await operator(clusterId).deletePlacement(CHECKOUT.namespace, CHECKOUT.kind, CHECKOUT.name);
    advance(REFRESH_SECONDS);

    const { pod } = await admit();

    expect(requiredTerms(pod)[0]?.matchExpressions).not.toContainEqual(SPOT);
    expect(pod?.metadata?.annotations?.[APPLIED_ANNOTATION]).toBe('migrate-legacy-pool');
  });

  it('answers exactly as the rules alone when the cluster has no placement policies', async () => {
    const { admit } = await admission();
    const expected = answerAdmissionReview(REVIEW, compileRuleSet((await exampleContent()).rules)).body;

    const { body } = await admit();

    expect(body).toBe(expected);
  });

  it('records the Diversity choice of a Pod in the capacity annotation', async () => {
    const { admit } = await admission({ placements: [checkout('Diversity', 100)] });

    const { pod } = await admit();

    expect(pod?.metadata?.annotations?.[CAPACITY_ANNOTATION]).toBe('spot');
    expect(requiredTerms(pod)).toEqual([{ matchExpressions: expect.arrayContaining([SPOT]) as unknown }]);
  });

  it('writes eks.amazonaws.com/capacityType SPOT when CAPACITY_FLAVOUR is eks', async () => {
    const config = readAdmissionConfig({ RULES_TABLE: table.tableName, WEBHOOK_TOKEN: TOKEN, CAPACITY_FLAVOUR: 'eks' });
    const { admit } = await admission({ capacityFlavour: config.capacityFlavour, placements: [checkout('Spot')] });

    const { pod } = await admit();

    expect(requiredTerms(pod)).toEqual([
      {
        matchExpressions: expect.arrayContaining([
          { key: 'eks.amazonaws.com/capacityType', operator: 'In', values: ['SPOT'] },
        ]) as unknown,
      },
    ]);
  });

  it('logs the placement version the answer was computed with', async () => {
    const { admit, logger } = await admission({ placements: [checkout('NonSpot')] });

    await admit();

    expect(logger.records.find((record) => record.message === 'admission')?.fields).toMatchObject({
      snapshotVersion: 1,
      placementVersion: 1,
    });
  });
});

describe('refreshing rules and placements together', () => {
  it('costs two GetItems (pointer and placement version, in parallel) when nothing changed', async () => {
    const { admit, counts, advance } = await admission({ placements: [checkout('Spot')] });
    await admit();
    const before = counts();
    advance(REFRESH_SECONDS);

    await admit();

    expect(countsSince(before, counts())).toEqual({ GetItemCommand: 2 });
  });

  it('loads a cluster without placements in the two GetItems and the snapshot Query, reading no set', async () => {
    const { admit, counts } = await admission();

    await admit();

    expect(counts()).toEqual({ GetItemCommand: 2, QueryCommand: 1 });
  });

  it('reads the placement set again but not the snapshot when only the placements changed', async () => {
    const { clusterId, admit, counts, advance } = await admission({ placements: [checkout('Spot')] });
    await admit();
    await operator(clusterId).setPlacement(checkout('NonSpot'));
    const before = counts();
    advance(REFRESH_SECONDS);

    await admit();

    expect(countsSince(before, counts())).toEqual({ GetItemCommand: 3 });
  });

  it('keeps applying the last placements, marked stale, while the store is down', async () => {
    const { admit, link, metrics, advance } = await admission({ placements: [checkout('Spot')] });
    await admit();
    link.cut();
    advance(REFRESH_SECONDS);

    const { statusCode, pod } = await admit();

    expect(statusCode).toBe(200);
    expect(requiredTerms(pod)).toEqual([{ matchExpressions: expect.arrayContaining([SPOT]) as unknown }]);
    expect(metrics.totals.get('StaleRules')).toBe(1);
  });

  it('keeps the last placements when the placement item is tampered with', async () => {
    const { clusterId, cache, admit, advance } = await admission({ placements: [checkout('Spot')] });
    await admit();
    await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: `cluster#${clusterId}` }, sk: { S: 'placement#set' } },
        UpdateExpression: 'SET policies = :policies, version = :version',
        ExpressionAttributeValues: { ':policies': { S: '[]' }, ':version': { N: '2' } },
      }),
    );
    advance(REFRESH_SECONDS);

    const { pod } = await admit();

    expect(requiredTerms(pod)).toEqual([{ matchExpressions: expect.arrayContaining([SPOT]) as unknown }]);
    expect((await cache.get()).refreshError?.message).toMatch(
      /placement policies of cluster ".*" in table ".*" are unusable/,
    );
  });

  it('answers 500 on a cold start with an unusable placement item, never admitting without the policies', async () => {
    const { clusterId, admit } = await admission({ placements: [checkout('Spot')] });
    await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: `cluster#${clusterId}` }, sk: { S: 'placement#set' } },
        UpdateExpression: 'SET policies = :policies',
        ExpressionAttributeValues: { ':policies': { S: 'not json' } },
      }),
    );

    const { statusCode } = await admit();

    expect(statusCode).toBe(500);
  });
});
