/**
 * Rotating the webhook token as docs/operations.md ("Rotating the webhook token") says, on a real API server calling
 * the shipped admission bundle: the bundle runs as one warm Lambda container (lambda-host.ts) reading its rules from an
 * embedded DynamoDB and its token from a wire-protocol Secrets Manager, registered with failurePolicy Fail so that any
 * 403 would fail a Pod creation. Pods are created throughout the three steps.
 */
import { request as httpsRequest } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import { generateToken } from '../../lib/endpoint/index.ts';
import { createFileRuleSource } from '../../lib/local-server/index.ts';
import { parseResourceDocuments, readTextFile } from '../../lib/rule-files/index.ts';
import { createDynamoClient, createSnapshotTable } from '../../lib/store/index.ts';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import { buildFunctions } from '../../scripts/build.ts';
import { startFakeSecretsManager } from '../endpoint/support.ts';
import { runPodmutation } from '../support/cli.ts';
import { EXAMPLES, fixtureText } from '../support/fixtures.ts';
import type { Json } from './api.ts';
import { servingCertificate } from './certificates.ts';
import type { ControlPlane } from './control-plane.ts';
import {
  admissionBundle,
  TEST_FUNCTION_ENVIRONMENT,
  startLambdaHost,
  tokenFingerprint,
  type HostRequest,
  type LambdaHost,
} from './lambda-host.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import { bindingsOf, snapshotsOf, recordsOf } from '../store/support.ts';

const cluster = useControlPlane();

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation-webhook-token-AbCdEf';
const TABLE = 'podmutation-rules';
const CLUSTER_ID = 'rotation';
// The minimum the function accepts (lib/endpoint/config.ts), so that step 3 takes effect within the test.
const TOKEN_REFRESH_SECONDS = 10;
// docs/operations.md step 1: "10 s, so that every container can do its early re-read".
const STEP_1_WAIT_MS = 10_000;
const PODS_PER_SECOND = 6;
const CHECKOUT = join(EXAMPLES, '..', 'tests', 'migrate-legacy-pool', 'resources', 'checkout.yaml');
// No scheduler serves it: the Pods stay Pending, so the scheduler and the kubelet stand-in have no work.
const UNSERVED_SCHEDULER = 'rotation-test-unscheduled';
const CLI_AWS_ENV = {
  AWS_ACCESS_KEY_ID: 'AKIDTEST',
  AWS_SECRET_ACCESS_KEY: 'test-secret',
  AWS_EC2_METADATA_DISABLED: 'true',
};

type Step = 'before rotation' | 'step 1 wait' | 'step 2 switching' | 'step 3 and refresh';

interface Creation {
  readonly name: string;
  readonly step: Step;
  readonly status: number;
  readonly message: string;
}

/** The production checkout Deployment of the migrate-legacy-pool example. */
async function checkoutDeployment(): Promise<Json> {
  const documents = parseResourceDocuments(await readTextFile(CHECKOUT), CHECKOUT) as Json[];
  const deployment = documents.find(
    (document) =>
      document.kind === 'Deployment' && (document.metadata as { namespace?: string }).namespace === 'production',
  );
  if (deployment === undefined) throw new Error(`${CHECKOUT} has no production Deployment`);
  return deployment;
}

/**
 * A Pod of the checkout template whose controller is the Deployment itself (uid `ownerUid`): the webhook resolves it to
 * Deployment production/checkout as it does a ReplicaSet's Pod, while no controller manages it (a ReplicaSet only
 * claims Pods of its own pod-template-hash), so every Pod is one creation this test makes and observes.
 */
function checkoutPod(deployment: Json, ownerUid: string, name: string): Json {
  const template = (deployment.spec as { template: { metadata: Json; spec: Json } }).template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'production',
      labels: template.metadata.labels,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'checkout', uid: ownerUid, controller: true },
      ],
    },
    spec: { ...template.spec, schedulerName: UNSERVED_SCHEDULER },
  };
}

/** The values of the example.com/node-pool expressions of the Pod's required node affinity, in order. */
function nodePools(pod: Json): string[] {
  const terms =
    (
      pod.spec as {
        affinity?: {
          nodeAffinity?: {
            requiredDuringSchedulingIgnoredDuringExecution?: {
              nodeSelectorTerms: { matchExpressions?: { key: string; values?: string[] }[] }[];
            };
          };
        };
      }
    ).affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  return terms.flatMap((term) =>
    (term.matchExpressions ?? [])
      .filter(({ key }) => key === 'example.com/node-pool')
      .flatMap(({ values }) => values ?? []),
  );
}

/** The HTTP status the host answers a review POSTed straight to it with `token`, as the API server would POST it. */
function statusFor(host: LambdaHost, token: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest(
      `${host.baseUrl}/admit/${token}`,
      { method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(fixtureText('reviews/deployment-legacy-pool.json'));
  });
}

/**
 * docs/operations.md step 2: `podmutation webhook-config --token-secret … | kubectl apply -f -`, the CLI reading the
 * fake secret.
 */
async function applyWebhookConfig(plane: ControlPlane, host: LambdaHost, secretsUrl: string): Promise<void> {
  const printed = await runPodmutation(
    [
      'webhook-config',
      '--url',
      host.baseUrl,
      '--token-secret',
      SECRET_ARN,
      '--ca-bundle',
      plane.caFile,
      '--failure-policy',
      'Fail',
    ],
    undefined,
    { ...CLI_AWS_ENV, AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsUrl },
  );
  if (printed.code !== 0) throw new Error(`podmutation webhook-config exited ${printed.code}: ${printed.stderr}`);
  const applied = await plane.kubectl(['apply', '-f', '-'], { input: printed.stdout });
  if (applied.code !== 0) throw new Error(`kubectl apply of the webhook configuration failed: ${applied.stderr}`);
}

function countOf(requests: readonly HostRequest[], token: string): number {
  return requests.filter((request) => request.token === token).length;
}

describe('rotating the webhook token as docs/operations.md says, while Pods are created', () => {
  const oldToken = generateToken();
  const newToken = generateToken();
  let scratch: string;
  let dynamo: EmbeddedDynamo;
  let secrets: Awaited<ReturnType<typeof startFakeSecretsManager>>;
  let host: LambdaHost;

  beforeAll(async () => {
    const plane = cluster();
    scratch = await mkdtemp(join(tmpdir(), 'podmutation-rotation-'));
    const [bundles, started, fake, certificate] = await Promise.all([
      buildFunctions({ outdir: join(scratch, 'dist') }),
      startEmbeddedDynamo(),
      startFakeSecretsManager(new Map([[SECRET_ARN, oldToken]])),
      servingCertificate(plane.certificates.ca, 'podmutation-admission'),
    ]);
    dynamo = started;
    secrets = fake;
    // The example rules published into the table as the local server publishes rule files.
    const client = createDynamoClient({ endpoint: dynamo.endpoint });
    try {
      await createSnapshotTable(client, TABLE);
      const publication = await createFileRuleSource([EXAMPLES]).publishRules(
        {
          snapshots: snapshotsOf({ client, tableName: TABLE })(CLUSTER_ID),
          records: recordsOf({ client, tableName: TABLE })(CLUSTER_ID),
          bindings: bindingsOf({ client, tableName: TABLE })(CLUSTER_ID),
        },
        CLUSTER_ID,
      );
      expect(publication.invalid).toEqual([]);
    } finally {
      client.destroy();
    }
    host = await startLambdaHost({
      bundle: admissionBundle(bundles),
      certificate,
      dir: scratch,
      environment: {
        RULES_TABLE: TABLE,
        DYNAMODB_ENDPOINT: dynamo.endpoint,
        CLUSTER_ID,
        WEBHOOK_TOKEN_SECRET_ARN: SECRET_ARN,
        TOKEN_REFRESH_SECONDS: String(TOKEN_REFRESH_SECONDS),
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
        ...TEST_FUNCTION_ENVIRONMENT,
      },
    });

    await plane.ensureNamespace('production');
    await applyWebhookConfig(plane, host, secrets.url);
    const probe = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: 'webhook-probe-', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'probe' }] },
    };
    await waitFor(
      'the API server to call the Lambda host',
      async () => {
        // A dry run is admitted (sideEffects: NoneOnDryRun) and stored nowhere.
        await plane.admin.request('POST', '/api/v1/namespaces/default/pods', { body: probe, query: { dryRun: 'All' } });
        return (await host.requests()).some(({ status }) => status === 200) ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  }, 180_000);

  afterAll(async () => {
    await host?.stop();
    await Promise.all([dynamo?.close(), secrets?.close()]);
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  it('fails no Pod creation, mutates every Pod, and refuses the old token once its version is removed', async () => {
    const plane = cluster();
    const deployment = await checkoutDeployment();
    // The owner: the real Deployment, with no replicas of its own.
    const created = await plane.admin.json<Json>('POST', '/apis/apps/v1/namespaces/production/deployments', {
      body: { ...deployment, spec: { ...(deployment.spec as Json), replicas: 0 } },
    });
    const ownerUid = (created.metadata as { uid: string }).uid;
    const [oldPrint, newPrint] = [tokenFingerprint(oldToken), tokenFingerprint(newToken)];

    let step: Step = 'before rotation';
    const creations: Promise<Creation>[] = [];
    let next = 0;
    const creator = setInterval(() => {
      const name = `checkout-rotation-${String(next++).padStart(4, '0')}`;
      const during = step;
      creations.push(
        plane.admin
          .request('POST', '/api/v1/namespaces/production/pods', { body: checkoutPod(deployment, ownerUid, name) })
          .then(
            (answer) => ({
              name,
              step: during,
              status: answer.status,
              message: answer.status === 201 ? '' : answer.text.slice(0, 300),
            }),
            (error: unknown) => ({ name, step: during, status: 0, message: (error as Error).message }),
          ),
      );
    }, 1000 / PODS_PER_SECOND);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    let appliedAt: number;
    let lastOldAt: number;
    try {
      await sleep(2_000);

      // Step 1: put-secret-value, then docs/operations.md's wait.
      secrets.rotate(SECRET_ARN, newToken);
      step = 'step 1 wait';
      await sleep(STEP_1_WAIT_MS);

      // Step 2: the configuration with the new AWSCURRENT, applied; then until the API server presents only it:
      // no old token for 2 s, and at least 5 requests with the new one since the last old one.
      step = 'step 2 switching';
      await applyWebhookConfig(plane, host, secrets.url);
      appliedAt = Date.now();
      lastOldAt = await waitFor(
        'the API server to present only the new token',
        async () => {
          const requests = await host.requests();
          const lastOldAt = Math.max(0, ...requests.filter(({ token }) => token === oldPrint).map(({ at }) => at));
          const newSince = requests.filter(({ token, at }) => token === newPrint && at > lastOldAt).length;
          return newSince >= 5 && Date.now() - lastOldAt >= 2_000 ? lastOldAt : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );

      // Step 3: update-secret-version-stage removing AWSPREVIOUS; Pods keep coming for one refresh and a margin.
      step = 'step 3 and refresh';
      secrets.removePrevious(SECRET_ARN);
      await sleep((TOKEN_REFRESH_SECONDS + 3) * 1000);
    } finally {
      clearInterval(creator);
    }
    const results = await Promise.all(creations);
    const served = await host.requests();

    expect(results.filter(({ status }) => status !== 201)).toEqual([]);
    // Every step had Pods created during it.
    expect(new Set(results.map((result) => result.step))).toEqual(
      new Set<Step>(['before rotation', 'step 1 wait', 'step 2 switching', 'step 3 and refresh']),
    );
    // The API server presented the old token, then the new one, and the container answered every call with 200.
    expect(countOf(served, oldPrint)).toBeGreaterThan(0);
    expect(countOf(served, newPrint)).toBeGreaterThan(0);
    expect(served.filter(({ status }) => status !== 200)).toEqual([]);

    const stored = await plane.admin.json<{ items: Json[] }>('GET', '/api/v1/namespaces/production/pods');
    expect(stored.items.map((pod) => (pod.metadata as { name: string }).name).sort()).toEqual(
      results.map(({ name }) => name).sort(),
    );
    const unmutated = stored.items.filter((pod) => {
      const annotations = (pod.metadata as { annotations?: Record<string, string> }).annotations ?? {};
      return (
        annotations['example.com/migration'] !== 'merged-pool' ||
        annotations[APPLIED_ANNOTATION] !== 'migrate-legacy-pool' ||
        nodePools(pod).join() !== 'merged'
      );
    });
    expect(unmutated.map((pod) => (pod.metadata as { name: string }).name)).toEqual([]);

    // Past one refresh after step 3 the container refuses the old token and still takes the new one.
    await expect(statusFor(host, oldToken, plane.certificates.ca.cert)).resolves.toBe(403);
    await expect(statusFor(host, newToken, plane.certificates.ca.cert)).resolves.toBe(200);
    const firstNewAt = Math.min(...served.filter(({ token }) => token === newPrint).map(({ at }) => at));
    console.log(
      `rotation: ${results.length} Pods created (${PODS_PER_SECOND}/s), ${served.length} webhook calls; relative to the end of step 2's ` +
        `kubectl apply, the first new token arrived at ${firstNewAt - appliedAt} ms and the last old one at ${lastOldAt - appliedAt} ms`,
    );
  }, 150_000);
});
