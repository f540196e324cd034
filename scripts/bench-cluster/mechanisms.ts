/**
 * The ways of making the migration's change (or of making none) that the cluster bench compares. Each can be switched
 * on and off on the running control plane; switching waits until the API server acts accordingly (API servers pick up
 * webhook configurations and policies from informers, so a Pod created right after an apply may still miss them).
 */
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { generateToken } from '../../lib/endpoint/index.ts';
import { CONNECTION_LIMITS, MAX_CONNECTIONS } from '../../lib/local-server/index.ts';
import { admissionReview } from '../../test/support/builders.ts';
import type { Json } from '../../test/real-cluster/api.ts';
import { servingCertificate } from '../../test/real-cluster/certificates.ts';
import type { ControlPlane } from '../../test/real-cluster/control-plane.ts';
import { applyClusterPolicy, kyverno, startKyverno } from '../../test/real-cluster/kyverno.ts';
import { applyMigrationPolicy, deleteMigrationPolicy } from '../../test/real-cluster/mutating-policy.ts';
import { freePort, startSupervised, waitFor, type Supervised } from '../../test/real-cluster/processes.ts';
import {
  applyWebhookConfiguration,
  DEFAULT_WEBHOOK_NAME,
  serveWebhook,
  webhookCalls,
  webhookConfiguration,
} from '../../test/real-cluster/webhook.ts';
import { carriesMigration, NAMESPACE } from './creators.ts';

/** One mechanism under measurement. */
export interface Mechanism {
  readonly label: string;
  /** Its mutating webhooks' names in the API server's metrics; none for a policy or the floor. */
  readonly webhooks: readonly string[];
  /** Whether the Pods it admits carry the migration. */
  readonly mutates: boolean;
  /** The process doing its work outside the API server, if any. */
  readonly pid: () => number | undefined;
  /** Switches it on and waits until the API server uses it. */
  enable(): Promise<void>;
  /** Switches it off and waits until the API server no longer uses it. */
  disable(): Promise<void>;
}

/** What the mechanisms need: the control plane, and a Pod to probe it with (dry runs, stored nowhere). */
export interface BenchCluster {
  readonly plane: ControlPlane;
  readonly probePod: () => Json;
  /** Stops what the bench started, in reverse order. */
  readonly cleanups: (() => Promise<void>)[];
}

/** A dry-run creation of the probe Pod, as the API server would store it after admission. */
export async function dryRunPod(cluster: BenchCluster): Promise<Json> {
  return cluster.plane.admin.json<Json>('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, {
    body: cluster.probePod(),
    query: { dryRun: 'All' },
  });
}

/** Waits until dry runs of the probe Pod no longer reach the named webhooks (twice in a row, to outlast the informer). */
async function untilNotCalled(cluster: BenchCluster, names: readonly string[]): Promise<void> {
  let quiet = 0;
  await waitFor(
    `the API server to stop calling ${names.join(', ')}`,
    async () => {
      const calls = async (): Promise<number> => {
        const metrics = await cluster.plane.metrics();
        return names.reduce((sum, name) => sum + webhookCalls(metrics, name), 0);
      };
      const before = await calls();
      await dryRunPod(cluster);
      quiet = (await calls()) === before ? quiet + 1 : 0;
      return quiet >= 2 ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
}

/** No mutating admission beyond the API server's own plugins: the floor every other row is measured against. */
export function floor(): Mechanism {
  return {
    label: 'none (the floor)',
    webhooks: [],
    mutates: false,
    pid: () => undefined,
    enable: () => Promise.resolve(),
    disable: () => Promise.resolve(),
  };
}

/** A webhook registered with the configuration `podmutation webhook-config` prints for it. */
async function registeredWebhook(
  cluster: BenchCluster,
  served: { readonly label: string; readonly name: string; readonly baseUrl: string; readonly token: string },
  process: Supervised,
  mutates: boolean,
): Promise<Mechanism> {
  const { plane } = cluster;
  const configuration = await webhookConfiguration(plane, served, { name: served.name, failurePolicy: 'Fail' });
  return {
    label: served.label,
    webhooks: [served.name],
    mutates,
    pid: () => process.child.pid,
    enable: () => applyWebhookConfiguration(plane, configuration, served.name),
    async disable() {
      await plane.kubectl(['delete', 'mutatingwebhookconfiguration', served.name, '--ignore-not-found']);
      await untilNotCalled(cluster, [served.name]);
    },
  };
}

/** `podmutation serve --rules examples/rules`, as a platform engineer runs it without AWS. */
export async function podmutationServe(cluster: BenchCluster, rules: string, flags: readonly string[] = []) {
  const served = await serveWebhook(cluster.plane, { rules: [rules], flags });
  cluster.cleanups.push(() => served.stop());
  const mechanism = await registeredWebhook(
    cluster,
    { label: 'podmutation serve', name: DEFAULT_WEBHOOK_NAME, baseUrl: served.baseUrl, token: served.token },
    served.process,
    true,
  );
  return { mechanism, served };
}

// The allow-all webhook: parses the review for its uid and allows it, with the fixed patch of its third argument if
// given. Node's HTTPS server with the limits of `podmutation serve` (lib/local-server CONNECTION_LIMITS,
// MAX_CONNECTIONS), so only what happens inside differs.
const ALLOW_ALL_SOURCE = `import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
const [cert, key, port, patchFile] = process.argv.slice(2);
const patch = patchFile === undefined ? {} : { patchType: 'JSONPatch', patch: readFileSync(patchFile, 'utf8').trim() };
const server = createServer({ ...${JSON.stringify(CONNECTION_LIMITS)}, cert: readFileSync(cert), key: readFileSync(key) }, (request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, ...patch } });
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
});
server.maxConnections = ${MAX_CONNECTIONS};
server.listen(Number(port), '127.0.0.1', () => console.log('allow-all listening'));
`;

/**
 * The allow-all webhook: with `patch` (a base64 JSON Patch) it answers every review with it, so that the API server
 * applies a patch of the webhook's size while the webhook does no work of its own.
 */
export async function allowAll(cluster: BenchCluster, patch?: string): Promise<Mechanism> {
  const { plane } = cluster;
  const name = patch === undefined ? 'allow' : 'allow-patch';
  const certificate = await servingCertificate(plane.certificates.ca, `${name}-webhook`);
  const [script, certFile, keyFile, patchFile, logFile] = ['mjs', 'crt', 'key', 'patch', 'log'].map((extension) =>
    join(plane.dir, `${name}.${extension}`),
  ) as [string, string, string, string, string];
  await Promise.all([
    writeFile(script, ALLOW_ALL_SOURCE),
    writeFile(certFile, certificate.cert),
    writeFile(keyFile, certificate.key),
    writeFile(patchFile, patch ?? ''),
  ]);
  const port = await freePort();
  const args = [script, certFile, keyFile, String(port), ...(patch === undefined ? [] : [patchFile])];
  const child = startSupervised(`${name} webhook`, process.execPath, args, { logFile });
  cluster.cleanups.push(() => child.stop());
  await waitFor(
    `the ${name} webhook to listen`,
    () => Promise.resolve(readFileSync(logFile, 'utf8').includes('allow-all listening') ? true : undefined),
    { failFast: () => (child.exited() === undefined ? undefined : `exited (${child.exited()}):\n${child.logTail()}`) },
  );
  const label = patch === undefined ? 'allow-all webhook' : 'allow-all webhook + our patch';
  const served = {
    label,
    name: `${name}.podmutation.test`,
    baseUrl: `https://127.0.0.1:${port}`,
    token: generateToken(),
  };
  return registeredWebhook(cluster, served, child, patch !== undefined);
}

/** The AdmissionReview the API server sends for the probe Pod: the admitted Pod of a dry run with nothing registered. */
export async function probeReview(cluster: BenchCluster): Promise<Json> {
  const object = await dryRunPod(cluster);
  return admissionReview(object, {
    name: (object.metadata as { name: string }).name,
    userInfo: { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] },
    options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
  });
}

/** The JSON Patch (base64, as an AdmissionReview response carries it) that `podmutation serve` answers to `review`. */
export async function servedPatch(
  cluster: BenchCluster,
  served: { readonly baseUrl: string; readonly token: string },
  review: Json,
): Promise<string> {
  const answer = await postJson(`${served.baseUrl}/admit/${served.token}`, review, cluster.plane.certificates.ca.cert);
  const patch = (answer as { response?: { patch?: string } }).response?.patch;
  if (patch === undefined) throw new Error('podmutation serve answered the probe Pod without a patch');
  return patch;
}

function postJson(url: string, body: unknown, ca: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      url,
      { method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== 200)
            reject(
              new Error(`POST ${new URL(url).pathname.replace(/[^/]+$/, '…')}: HTTP ${response.statusCode}: ${text}`),
            );
          else resolve(JSON.parse(text));
        });
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

/** The MutatingAdmissionPolicy and binding that make migrate-legacy-pool's change (test/real-cluster/mutating-policy.ts). */
export function mutatingAdmissionPolicy(cluster: BenchCluster): Mechanism {
  return {
    label: 'MutatingAdmissionPolicy',
    webhooks: [],
    mutates: true,
    pid: () => undefined,
    enable: () => applyMigrationPolicy(cluster.plane),
    disable: () => deleteMigrationPolicy(cluster.plane),
  };
}

const KYVERNO_POLICY = fileURLToPath(
  new URL('../../test/real-cluster/fixtures/kyverno/migrate-legacy-pool.yaml', import.meta.url),
);

/** Kyverno's admission controller, out of cluster, with the ClusterPolicy that makes migrate-legacy-pool's change. */
export async function kyvernoPolicy(cluster: BenchCluster, log: (line: string) => void): Promise<Mechanism> {
  const { plane } = cluster;
  const running = await startKyverno(plane, await kyverno(log));
  cluster.cleanups.push(() => running.stop());
  const name = String((parse(readFileSync(KYVERNO_POLICY, 'utf8')) as { metadata: { name: string } }).metadata.name);
  return {
    label: `Kyverno ${running.release}`,
    webhooks: running.webhookNames,
    mutates: true,
    pid: () => running.pid,
    enable: () =>
      applyClusterPolicy(plane, running, KYVERNO_POLICY, {
        namespace: NAMESPACE,
        pod: cluster.probePod(),
        mutated: (pod) => carriesMigration(pod as unknown as Json),
      }),
    async disable() {
      await plane.kubectl(['delete', 'clusterpolicy', name, '--ignore-not-found']);
      await untilNotCalled(cluster, running.webhookNames);
    },
  };
}
