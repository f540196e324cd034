import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { answerAdmissionReview, type AdmissionReviewResponse } from '../../lib/admission/index.ts';
import { validatePodMutation } from '../../lib/api/index.ts';
import { compileRuleSet } from '../../lib/engine/index.ts';
import { createAdmissionHandler, type AdmissionHandler } from '../../lib/endpoint/index.ts';
import type { NodeSelectorTerm } from '../../lib/scheduling/index.ts';
import { fixtureText } from '../support/fixtures.ts';
import { parseAnswer, parseReview } from '../support/reviews.ts';
import { freshClusterId, snapshotsOf, placementsOf } from '../store/support.ts';
import {
  TOKEN,
  admissionEvent,
  exampleContent,
  patchedObject,
  recordingLogger,
  recordingMetrics,
  ruleCache,
  type EventOptions,
} from './support.ts';
import { useTestTable } from '../support/dynamo.ts';
import { type AdmissionRules } from '../../lib/endpoint/admission-rules.ts';
import { type SnapshotCache } from '../../lib/endpoint/snapshot-cache.ts';

const DEPLOYMENT_REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const UPDATE_REVIEW = fixtureText('reviews/pod-update.json');
const SMALL_LIMIT = 16 * 1024;

const table = useTestTable();
let cache: SnapshotCache<AdmissionRules>;
let logger: ReturnType<typeof recordingLogger>;
let metrics: ReturnType<typeof recordingMetrics>;
let handler: AdmissionHandler;
let smallLimitHandler: AdmissionHandler;

beforeAll(async () => {
  const store = snapshotsOf({ client: table.client, tableName: table.tableName });
  const clusterId = freshClusterId();
  await store(clusterId).publish(await exampleContent());
  cache = ruleCache(
    { snapshots: store, placements: placementsOf({ client: table.client, tableName: table.tableName }) },
    clusterId,
  );
});

beforeEach(() => {
  logger = recordingLogger();
  metrics = recordingMetrics();
  const deps = { rules: cache, acceptedTokens: () => Promise.resolve([TOKEN]), logger, metrics };
  handler = createAdmissionHandler(deps);
  smallLimitHandler = createAdmissionHandler({ ...deps, maxBodyBytes: SMALL_LIMIT });
});

function post(body: string, options: EventOptions = {}): Promise<APIGatewayProxyStructuredResultV2> {
  return handler(admissionEvent({ body, ...options }));
}

function jsonBody(result: APIGatewayProxyStructuredResultV2): unknown {
  return JSON.parse(result.body ?? '');
}

/** The AdmissionReview a 200 answer carries. */
function answerBody(result: APIGatewayProxyStructuredResultV2): AdmissionReviewResponse {
  return parseAnswer(result.body ?? '');
}

/** The part of deployment-legacy-pool.json a test edits: the required node selector terms of its Pod. */
interface EditableLegacyPoolReview {
  readonly request: {
    readonly object: {
      readonly spec: {
        readonly affinity: {
          readonly nodeAffinity: {
            readonly requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: NodeSelectorTerm[] };
          };
        };
      };
    };
  };
}

describe('createAdmissionHandler answers 200 with the AdmissionReview response', () => {
  it('mutates a Deployment Pod on the legacy pool with a JSON Patch that applies', async () => {
    const result = await post(DEPLOYMENT_REVIEW);

    const review = parseReview(DEPLOYMENT_REVIEW);
    const { response } = answerBody(result);
    expect(result.statusCode).toBe(200);
    expect(response).toMatchObject({ uid: review.request.uid, allowed: true, patchType: 'JSONPatch' });
    const pod = patchedObject(review, response.patch);
    expect(pod.metadata?.annotations?.['podmutation.agent.cloudpilot.ai/applied']).toBe('migrate-legacy-pool');
    expect(pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual(
      [
        {
          matchExpressions: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'example.com/node-pool', operator: 'In', values: ['merged'] },
          ],
        },
      ],
    );
  });

  it('returns exactly the body answerAdmissionReview produces, as application/json', async () => {
    const content = await exampleContent();
    const expected = answerAdmissionReview(DEPLOYMENT_REVIEW, compileRuleSet(content.rules)).body;

    const result = await post(DEPLOYMENT_REVIEW);

    expect(result.body).toBe(expected);
    expect(result.headers).toEqual({ 'content-type': 'application/json' });
    expect(result.isBase64Encoded).toBe(false);
  });

  it('allows a Pod UPDATE with no patch', async () => {
    const result = await post(UPDATE_REVIEW);

    expect(result.statusCode).toBe(200);
    expect(answerBody(result).response).toEqual({ uid: parseReview(UPDATE_REVIEW).request.uid, allowed: true });
  });

  it('answers a base64-encoded body exactly as the same body in plain text', async () => {
    const plain = await post(DEPLOYMENT_REVIEW);
    const encoded = await post(DEPLOYMENT_REVIEW, { base64: true });

    expect(encoded.statusCode).toBe(200);
    expect(encoded.body).toBe(plain.body);
  });

  it('accepts application/json with a UTF-8 charset parameter', async () => {
    const result = await post(DEPLOYMENT_REVIEW, { contentType: 'application/json; charset=UTF-8' });

    expect(result.statusCode).toBe(200);
  });

  it('reads the token from rawPath when the event has no pathParameters', async () => {
    const result = await post(DEPLOYMENT_REVIEW, { rawPathOnly: true });

    expect(result.statusCode).toBe(200);
  });
});

describe('createAdmissionHandler rejects requests it cannot answer', () => {
  it('answers 403 with a generic body for a wrong token', async () => {
    const result = await post(DEPLOYMENT_REVIEW, { token: `${TOKEN.slice(0, -1)}X` });

    expect(result.statusCode).toBe(403);
    expect(jsonBody(result)).toEqual({ error: 'Forbidden', message: 'the request is not authorized' });
  });

  it('answers 403 for a token that is a prefix of the expected one', async () => {
    const result = await post(DEPLOYMENT_REVIEW, { token: TOKEN.slice(0, 10) });

    expect(result.statusCode).toBe(403);
  });

  it('answers 403 when the path carries no token', async () => {
    const result = await post(DEPLOYMENT_REVIEW, { token: undefined });

    expect(result.statusCode).toBe(403);
  });

  it('answers 405 with Allow: POST for a GET', async () => {
    const result = await handler(admissionEvent({ method: 'GET' }));

    expect(result.statusCode).toBe(405);
    expect(result.headers).toMatchObject({ allow: 'POST' });
  });

  it('checks the method before the token', async () => {
    const result = await handler(admissionEvent({ method: 'PUT', token: 'not-the-token', body: DEPLOYMENT_REVIEW }));

    expect(result.statusCode).toBe(405);
  });

  it('answers 415 for a text/plain body', async () => {
    const result = await post(DEPLOYMENT_REVIEW, { contentType: 'text/plain' });

    expect(result.statusCode).toBe(415);
    expect(jsonBody(result)).toEqual({
      error: 'UnsupportedMediaType',
      message: 'content-type must be application/json (got "text/plain")',
    });
  });

  it('answers 415 when there is no content-type', async () => {
    const result = await post(DEPLOYMENT_REVIEW, { contentType: undefined });

    expect(result.statusCode).toBe(415);
  });

  it('answers 415 for JSON declared in a charset other than UTF-8', async () => {
    const result = await post(DEPLOYMENT_REVIEW, { contentType: 'application/json; charset=iso-8859-1' });

    expect(result.statusCode).toBe(415);
  });

  it('answers 413 for a plain body one byte above the limit', async () => {
    const result = await smallLimitHandler(admissionEvent({ body: 'x'.repeat(SMALL_LIMIT + 1) }));

    expect(result.statusCode).toBe(413);
    expect(jsonBody(result)).toEqual({
      error: 'PayloadTooLarge',
      message: `request body is at least ${SMALL_LIMIT + 1} bytes, above the limit of ${SMALL_LIMIT} bytes`,
    });
  });

  it('measures the limit in UTF-8 bytes, not characters', async () => {
    // 6,000 characters of 3 bytes each: under the limit in characters, above it in bytes.
    const result = await smallLimitHandler(admissionEvent({ body: '€'.repeat(6_000) }));

    expect(result.statusCode).toBe(413);
  });

  it('measures a base64 body by its decoded bytes', async () => {
    const atLimit = await smallLimitHandler(admissionEvent({ body: 'x'.repeat(SMALL_LIMIT), base64: true }));
    const aboveLimit = await smallLimitHandler(admissionEvent({ body: 'x'.repeat(SMALL_LIMIT + 1), base64: true }));

    // At the limit the body is read (and is not JSON); one byte more is refused unread.
    expect(atLimit.statusCode).toBe(400);
    expect(aboveLimit.statusCode).toBe(413);
  });

  it('checks the token before the body size', async () => {
    const result = await smallLimitHandler(admissionEvent({ token: 'wrong', body: 'x'.repeat(SMALL_LIMIT + 1) }));

    expect(result.statusCode).toBe(403);
  });

  it.each([
    ['a body that is not JSON', 'this is not JSON', /^AdmissionReview is not valid JSON/],
    [
      'a wrong apiVersion',
      fixtureText('reviews/malformed-v1beta1.json'),
      /^AdmissionReview apiVersion must be admission\.k8s\.io\/v1/,
    ],
    [
      'a wrong kind',
      JSON.stringify({ ...parseReview(DEPLOYMENT_REVIEW), kind: 'Pod' }),
      /^AdmissionReview kind must be AdmissionReview/,
    ],
    [
      'no request',
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
      /^AdmissionReview has no request object/,
    ],
    [
      'no request.uid',
      fixtureText('reviews/malformed-no-uid.json'),
      /^AdmissionReview request\.uid must be a non-empty string/,
    ],
  ])('answers 400 with a MalformedInputError for %s', async (_, body, message) => {
    const result = await post(body);

    expect(result.statusCode).toBe(400);
    expect(jsonBody(result)).toEqual({
      error: 'MalformedInputError',
      message: expect.stringMatching(message) as unknown,
    });
  });
});

describe('createAdmissionHandler logs and metrics', () => {
  it('logs one line per admission with the verdict, the snapshot and the timing', async () => {
    await post(DEPLOYMENT_REVIEW);

    expect(logger.records).toHaveLength(1);
    const [line] = logger.records;
    expect(line).toMatchObject({ level: 'info', message: 'admission' });
    expect(line!.fields).toMatchObject({
      route: 'POST /admit/{token}',
      status: 200,
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      namespace: 'production',
      pod: 'checkout-7d9f8b6c5d-',
      workloadKind: 'Deployment',
      workloadName: 'checkout',
      decision: 'mutated',
      rules: ['migrate-legacy-pool'],
      patchOperations: expect.any(Number) as unknown,
      snapshotVersion: 1,
      stale: false,
    });
    expect(line!.fields.cacheAgeSeconds).toBeGreaterThanOrEqual(0);
    expect(line!.fields.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('never logs the token, the raw path or any part of the Pod body', async () => {
    await post(DEPLOYMENT_REVIEW);
    await post(DEPLOYMENT_REVIEW, { token: 'a-wrong-token-that-must-not-be-logged' });
    await post(
      '{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"image": "registry.example.com/x"',
    );

    const logged = JSON.stringify(logger.records);
    expect(logger.records).toHaveLength(3);
    expect(logged).not.toContain(TOKEN);
    expect(logged).not.toContain('a-wrong-token-that-must-not-be-logged');
    expect(logged.replaceAll('POST /admit/{token}', '')).not.toContain('/admit/');
    expect(logged).not.toContain('registry.example.com');
    expect(logged).not.toContain('containers');
  });

  it('counts a mutation as an admission and a mutation, with the rules age', async () => {
    await post(DEPLOYMENT_REVIEW);

    expect(metrics.totals.get('Admissions')).toBe(1);
    expect(metrics.totals.get('Mutations')).toBe(1);
    expect(metrics.totals.has('RulesAgeSeconds')).toBe(true);
    expect(metrics.totals.has('Errors')).toBe(false);
  });

  it('counts an unchanged Pod as an admission only', async () => {
    await post(UPDATE_REVIEW);

    expect(metrics.totals.get('Admissions')).toBe(1);
    expect(metrics.totals.has('Mutations')).toBe(false);
  });

  it('answers a Pod over a runtime limit with a denial, counted as a denial', async () => {
    const verdict = validatePodMutation({
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'annotate-production' },
      spec: {
        enable: true,
        workloadSelector: { namespaces: ['production'] },
        mutationAdd: { annotations: { 'example.com/a': 'b' } },
      },
    });
    if (!verdict.valid) throw new Error('the denial test rule must be valid');
    const ruleSet = compileRuleSet([verdict.rule]);
    const snapshot = {
      value: ruleSet,
      version: 7,
      contentHash: 'sha256:test',
      syncedAt: '2026-12-01T10:00:00.000Z',
      ageSeconds: 1,
      stale: false,
    };
    const denying = createAdmissionHandler({
      rules: { get: () => Promise.resolve(snapshot) },
      acceptedTokens: () => Promise.resolve([TOKEN]),
      logger,
      metrics,
    });
    const review = JSON.parse(DEPLOYMENT_REVIEW) as EditableLegacyPoolReview;
    // 257 raw required terms on the incoming Pod: above the engine's limit of 256.
    review.request.object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms =
      Array.from({ length: 257 }, (_, index) => ({
        matchExpressions: [{ key: 'example.com/pool', operator: 'In', values: [`v${index}`] }],
      }));

    const result = await denying(admissionEvent({ body: JSON.stringify(review) }));

    expect(result.statusCode).toBe(200);
    expect(answerBody(result).response).toMatchObject({ allowed: false, status: { code: 400 } });
    expect(metrics.totals.get('Denials')).toBe(1);
    expect(logger.records[0]?.fields).toMatchObject({ decision: 'denied', snapshotVersion: 7 });
  });

  it('counts client errors as Rejected, not as Errors', async () => {
    await post(DEPLOYMENT_REVIEW, { token: 'wrong' });
    await post('not JSON');

    expect(metrics.totals.get('Rejected')).toBe(2);
    expect(metrics.totals.has('Errors')).toBe(false);
    expect(metrics.totals.has('Admissions')).toBe(false);
  });
});
