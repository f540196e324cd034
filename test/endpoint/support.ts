/** Test support for the HTTP handler: events, a recording logger and metrics, and rules in a real DynamoDB. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import jsonPatch from 'fast-json-patch';
import { vi } from 'vitest';
import { validatePodMutation } from '../../lib/api/index.ts';
import { compileRuleSet } from '../../lib/engine/index.ts';
import { compareCodeUnits } from '../../lib/text/index.ts';
import type { LogFields, Metrics } from '../../lib/observability/index.ts';
import { createAdmissionRulesCache } from '../../lib/endpoint/index.ts';
import type { Logger } from '../../lib/observability/index.ts';
import type { StoreError } from '../../lib/errors/index.ts';
import type { CapacityFlavour } from '../../lib/placement/index.ts';
import { loadRuleFiles } from '../../lib/rule-files/index.ts';
import type { PlacementStore, SnapshotStore } from '../../lib/store/index.ts';
import type { PerCluster } from '../store/support.ts';
import { EXAMPLES } from '../support/fixtures.ts';
import { decodePatch } from '../support/reviews.ts';
import { type AdmissionRules } from '../../lib/endpoint/admission-rules.ts';
import { type CachedSnapshot, type SnapshotCache } from '../../lib/endpoint/snapshot-cache.ts';

const TOKEN = 'test-token-Zm9vYmFyYmF6cXV4cXV1eGNvcmdl';

interface LogRecord {
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: LogFields;
}

/** A logger that keeps every line. */
function recordingLogger(): Logger & { readonly records: LogRecord[] } {
  const records: LogRecord[] = [];
  const record = (level: LogRecord['level']) => (message: string, fields: LogFields) => {
    records.push({ level, message, fields });
  };
  return { records, info: record('info'), warn: record('warn'), error: record('error') };
}

/** Metrics that sum what was added, by name. */
function recordingMetrics(): Metrics & { readonly totals: Map<string, number> } {
  const totals = new Map<string, number>();
  return {
    totals,
    addMetric(name, _unit, value) {
      totals.set(name, (totals.get(name) ?? 0) + value);
    },
  };
}

interface EventOptions {
  readonly method?: string;
  /** The path token; undefined leaves it out of both the path and pathParameters. */
  readonly token?: string | undefined;
  readonly body?: string;
  readonly base64?: boolean;
  readonly contentType?: string | undefined;
  /** Leave pathParameters out, as a hand-built or proxied event might. */
  readonly rawPathOnly?: boolean;
}

/** An API Gateway HTTP API v2 event for /admit/{token}, shaped as API Gateway sends it. */
function admissionEvent(options: EventOptions = {}): APIGatewayProxyEventV2 {
  const method = options.method ?? 'POST';
  const token = 'token' in options ? options.token : TOKEN;
  const contentType = 'contentType' in options ? options.contentType : 'application/json';
  const body = options.body;
  const encoded =
    body === undefined ? undefined : options.base64 === true ? Buffer.from(body).toString('base64') : body;
  return {
    version: '2.0',
    routeKey: 'ANY /admit/{token}',
    rawPath: token === undefined ? '/admit/' : `/admit/${token}`,
    rawQueryString: '',
    headers: {
      host: 'abc123.execute-api.eu-west-1.amazonaws.com',
      ...(contentType === undefined ? {} : { 'content-type': contentType }),
    },
    ...(token === undefined || options.rawPathOnly === true ? {} : { pathParameters: { token } }),
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: {
        method,
        path: '/admit/x',
        protocol: 'HTTP/1.1',
        sourceIp: '192.0.2.10',
        userAgent: 'kube-apiserver-admission',
      },
      requestId: 'request-1',
      routeKey: 'ANY /admit/{token}',
      stage: '$default',
      time: '01/Dec/2026:10:00:00 +0000',
      timeEpoch: Date.parse('2026-12-01T10:00:00Z'),
    },
    ...(encoded === undefined ? {} : { body: encoded }),
    isBase64Encoded: options.base64 === true,
  };
}

/** The example rules, valid ones only, sorted by name, as a publisher stores them. */
async function exampleContent() {
  const loaded = await loadRuleFiles([EXAMPLES]);
  return {
    rules: [...loaded.rules].sort((left, right) => compareCodeUnits(left.name, right.name)),
    invalid: loaded.invalid,
    resourceVersion: '',
    syncedAt: '2026-12-01T10:00:00.000Z',
  };
}

/** The stores of one table the admission cache reads, opened for the cluster the cache serves. */
interface AdmissionStores {
  readonly snapshots: PerCluster<Pick<SnapshotStore, 'readPointer' | 'readSnapshot'>>;
  readonly placements: PerCluster<Pick<PlacementStore, 'readPlacementVersion' | 'readPlacements'>>;
}

/** The admission cache over the stores, compiling rules and placements as the Lambda does (flavour karpenter by default). */
function ruleCache(
  stores: AdmissionStores,
  clusterId: string,
  options: {
    readonly clock?: () => number;
    readonly refreshSeconds?: number;
    readonly maxStaleSeconds?: number;
    readonly deadlineMs?: number;
    readonly capacityFlavour?: CapacityFlavour;
    readonly onRefreshFailure?: (error: StoreError) => void;
  } = {},
): SnapshotCache<AdmissionRules> {
  return createAdmissionRulesCache({
    snapshots: stores.snapshots(clusterId),
    placements: stores.placements(clusterId),
    clusterId,
    refreshSeconds: options.refreshSeconds ?? 30,
    maxStaleSeconds: options.maxStaleSeconds ?? 300,
    capacityFlavour: options.capacityFlavour ?? 'karpenter',
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    ...(options.onRefreshFailure === undefined ? {} : { onRefreshFailure: options.onRefreshFailure }),
  });
}

/** Rules that never change and never fail: one rule annotating every Pod, for tests of the token. */
function annotatingRules(): { get(): Promise<CachedSnapshot<AdmissionRules>> } {
  const verdict = validatePodMutation({
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodMutation',
    metadata: { name: 'annotate' },
    spec: { enable: true, workloadSelector: { all: true }, mutationAdd: { annotations: { 'example.com/a': 'b' } } },
  });
  if (!verdict.valid) throw new Error('the annotating test rule must be valid');
  const snapshot = {
    value: compileRuleSet([verdict.rule]),
    version: 1,
    contentHash: 'sha256:test',
    syncedAt: '2026-12-01T10:00:00.000Z',
    ageSeconds: 1,
    stale: false,
  };
  return { get: () => Promise.resolve(snapshot) };
}

/** The object of a review after applying the response's base64 JSON Patch strictly. */
function patchedObject<T>(review: { readonly request: { readonly object: T } }, patch: string | undefined): T {
  return jsonPatch.applyPatch(structuredClone(review.request.object), decodePatch(patch), true, false).newDocument;
}

/**
 * Points every Secrets Manager client created from now on, the product's own included, at `endpoint`, with test
 * credentials (the SDK's service-specific endpoint variable); undone by vi.unstubAllEnvs.
 */
function useSecretsManagerAt(endpoint: string): void {
  vi.stubEnv('AWS_ENDPOINT_URL_SECRETS_MANAGER', endpoint);
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDTEST');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test-secret');
}

/** The versions of a fake secret by staging label: AWSCURRENT, AWSPREVIOUS after a rotation, AWSPENDING when staged. */
interface FakeSecretVersions {
  current: string;
  previous?: string;
  pending?: string;
}

/**
 * A loopback Secrets Manager that answers GetSecretValue (JSON 1.1) from a map, honouring VersionStage (AWSCURRENT
 * by default, AWSPREVIOUS after `rotate`, gone after `removePrevious`), counting calls.
 */
async function startFakeSecretsManager(secrets: Map<string, string>) {
  const versions = new Map<string, FakeSecretVersions>([...secrets].map(([id, value]) => [id, { current: value }]));
  let calls = 0;
  let failing = false;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      calls += 1;
      const send = (status: number, body: unknown): void => {
        response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        response.end(JSON.stringify(body));
      };
      const { SecretId: secretId, VersionStage: stage = 'AWSCURRENT' } = JSON.parse(
        Buffer.concat(chunks).toString('utf8'),
      ) as {
        SecretId: string;
        VersionStage?: string;
      };
      if (failing) return send(500, { __type: 'InternalServiceError', message: 'service unavailable' });
      const secret = versions.get(secretId);
      if (secret === undefined)
        return send(400, {
          __type: 'ResourceNotFoundException',
          message: "Secrets Manager can't find the specified secret.",
        });
      const value =
        stage === 'AWSCURRENT'
          ? secret.current
          : stage === 'AWSPREVIOUS'
            ? secret.previous
            : stage === 'AWSPENDING'
              ? secret.pending
              : undefined;
      if (value === undefined) {
        return send(400, {
          __type: 'ResourceNotFoundException',
          message: `Secrets Manager can't find the specified secret value for staging label: ${stage}`,
        });
      }
      return send(200, { ARN: secretId, Name: 'webhook-token', SecretString: value, VersionStages: [stage] });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const versionsOf = (id: string): FakeSecretVersions => {
    const secret = versions.get(id);
    if (secret === undefined) throw new Error(`no fake secret ${id}`);
    return secret;
  };
  return {
    /** Its endpoint, for AWS_ENDPOINT_URL_SECRETS_MANAGER of another process. */
    url: `http://127.0.0.1:${port}`,
    calls: () => calls,
    fail: (value: boolean) => {
      failing = value;
    },
    /** PutSecretValue's staging: the new value becomes AWSCURRENT, the old one AWSPREVIOUS. */
    rotate: (id: string, value: string) => {
      const secret = versionsOf(id);
      versions.set(id, { current: value, previous: secret.current });
    },
    /** UpdateSecretVersionStage removing AWSPREVIOUS from the old version. */
    removePrevious: (id: string) => {
      const secret = { ...versionsOf(id) };
      delete secret.previous;
      versions.set(id, secret);
    },
    /** PutSecretValue with --version-stages AWSPENDING: a new version that is not current yet. */
    stagePending: (id: string, value: string) => {
      versions.set(id, { ...versionsOf(id), pending: value });
    },
    /**
     * UpdateSecretVersionStage moving AWSCURRENT to the AWSPENDING version: Secrets Manager moves AWSPREVIOUS to the
     * version that was current, and AWSPENDING stays on the new one until it is removed.
     */
    promotePending: (id: string) => {
      const secret = versionsOf(id);
      if (secret.pending === undefined) throw new Error(`fake secret ${id} has no AWSPENDING version`);
      versions.set(id, { current: secret.pending, previous: secret.current, pending: secret.pending });
    },
    client: () =>
      new SecretsManagerClient({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
        maxAttempts: 1,
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export {
  TOKEN,
  recordingLogger,
  recordingMetrics,
  admissionEvent,
  exampleContent,
  ruleCache,
  annotatingRules,
  patchedObject,
  startFakeSecretsManager,
  useSecretsManagerAt,
};
export type { LogRecord, EventOptions, AdmissionStores };
