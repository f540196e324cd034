/**
 * The webhook as a platform engineer runs it in front of a cluster without AWS: `podmutation serve` over HTTPS with a
 * certificate of the cluster's CA, registered with the configuration `podmutation webhook-config --ca-bundle` prints,
 * applied with kubectl. Both are the real CLI, started as its users start it.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { generateToken } from '../../lib/endpoint/index.ts';
import { BIN, runPodmutation } from '../support/cli.ts';
import { servingCertificate } from './certificates.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { podMutationObject } from './kubectl.ts';
import { freePort, startSupervised, waitFor, type Supervised } from './processes.ts';

/** A running `podmutation serve`. */
interface ServedWebhook {
  /** The base URL (https://127.0.0.1:PORT), what webhook-config takes as --url. */
  readonly baseUrl: string;
  readonly token: string;
  readonly process: Supervised;
  /** Stops the server; the registration stays, as when an endpoint goes away. */
  stop(): Promise<void>;
}

interface ServeOptions {
  /** `--rules` paths (files or folders). */
  readonly rules: readonly string[];
  /** `--placements FILE`. */
  readonly placements?: string;
  /** Further flags, such as ['--enforcement', 'audit']. */
  readonly flags?: readonly string[];
  /** Serve on this port (a restart keeps its registration); default a free one. */
  readonly port?: number;
  readonly token?: string;
}

let served = 0;

/**
 * Starts `podmutation serve --rules … --tls-cert --tls-key` on loopback, re-reading its rules every second
 * (`--refresh 1`) so that a rule edit reaches the next Pod, and resolves once it printed its URL.
 */
async function serveWebhook(plane: ControlPlane, options: ServeOptions): Promise<ServedWebhook> {
  served += 1;
  const certificate = await servingCertificate(plane.certificates.ca, 'podmutation-webhook');
  const certFile = join(plane.dir, `webhook-${served}.crt`);
  const keyFile = join(plane.dir, `webhook-${served}.key`);
  await Promise.all([writeFile(certFile, certificate.cert), writeFile(keyFile, certificate.key)]);
  const port = options.port ?? (await freePort());
  const token = options.token ?? generateToken();
  const args = [
    BIN,
    'serve',
    ...options.rules.flatMap((path) => ['--rules', path]),
    ...(options.placements === undefined ? [] : ['--placements', options.placements]),
    '--tls-cert',
    certFile,
    '--tls-key',
    keyFile,
    '--port',
    String(port),
    '--token',
    token,
    '--refresh',
    '1',
    ...(options.flags ?? []),
  ];
  const logFile = join(plane.dir, `webhook-${served}.log`);
  const process = startSupervised('podmutation serve', globalThis.process.execPath, args, { logFile });
  await waitFor(
    'podmutation serve to print its URL',
    () =>
      Promise.resolve(
        /webhook URL \(clientConfig\.url of a MutatingWebhookConfiguration\): https:/.test(
          readFileSync(logFile, 'utf8'),
        )
          ? true
          : undefined,
      ),
    {
      failFast: () =>
        process.exited() === undefined ? undefined : `exited (${process.exited()}):\n${process.logTail()}`,
      timeoutMs: 30_000,
    },
  );
  return { baseUrl: `https://127.0.0.1:${port}`, token, process, stop: () => process.stop() };
}

interface RegisterOptions {
  readonly failurePolicy?: 'Ignore' | 'Fail';
  readonly timeoutSeconds?: number;
  readonly name?: string;
}

/** The configuration `podmutation webhook-config` prints for this server, with the cluster CA as --ca-bundle. */
async function webhookConfiguration(
  plane: ControlPlane,
  webhook: Pick<ServedWebhook, 'baseUrl' | 'token'>,
  options: RegisterOptions = {},
): Promise<string> {
  const run = await runPodmutation([
    'webhook-config',
    '--url',
    webhook.baseUrl,
    '--token',
    webhook.token,
    '--ca-bundle',
    plane.caFile,
    ...(options.failurePolicy === undefined ? [] : ['--failure-policy', options.failurePolicy]),
    ...(options.timeoutSeconds === undefined ? [] : ['--timeout', String(options.timeoutSeconds)]),
    ...(options.name === undefined ? [] : ['--name', options.name]),
  ]);
  if (run.code !== 0) throw new Error(`podmutation webhook-config exited ${run.code}: ${run.stderr}`);
  return run.stdout;
}

/** A folder for `serve --rules` holding one file per PodMutation. */
async function ruleFolder(
  plane: ControlPlane,
  rules: readonly { readonly name: string; readonly spec: Json }[],
): Promise<string> {
  const folder = await mkdtemp(join(plane.dir, 'rules-'));
  for (const { name, spec } of rules) {
    await writeFile(join(folder, `${name}.yaml`), stringify(podMutationObject(name, spec)));
  }
  return folder;
}

/** The configuration's name when none is given (WEBHOOK_DEFAULTS). */
const DEFAULT_WEBHOOK_NAME = 'podmutation.agent.cloudpilot.ai';

/** The sum of every series of a Prometheus metric whose labels include `labels` (text exposition format). */
function metricSum(metrics: string, metric: string, labels: Readonly<Record<string, string>>): number {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(`${metric}{`) && wanted.every((pair) => line.includes(pair)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** How often the API server has called the named webhook for a CREATE, by its admission duration histogram. */
function webhookCalls(metrics: string, name: string): number {
  return metricSum(metrics, 'apiserver_admission_webhook_admission_duration_seconds_count', {
    name,
    operation: 'CREATE',
  });
}

/**
 * `kubectl apply -f -` of a webhook configuration, then waits until the API server calls the webhook `name`: API
 * servers pick up configuration changes from a watch, so a Pod created right after the apply may still miss it.
 */
async function applyWebhookConfiguration(plane: ControlPlane, configuration: string, name: string): Promise<void> {
  const applied = await plane.kubectl(['apply', '-f', '-'], { input: configuration });
  if (applied.code !== 0) throw new Error(`kubectl apply of webhook configuration ${name} failed: ${applied.stderr}`);
  const before = webhookCalls(await plane.metrics(), name);
  const probe = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'webhook-probe-', namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'probe' }] },
  };
  await waitFor(
    `the API server to call webhook ${name}`,
    async () => {
      // A dry run is admitted (sideEffects: NoneOnDryRun) and stored nowhere.
      await plane.admin.request('POST', '/api/v1/namespaces/default/pods', { body: probe, query: { dryRun: 'All' } });
      return webhookCalls(await plane.metrics(), name) > before ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

/** `podmutation webhook-config … | kubectl apply -f -` for this server, once the API server calls it. */
async function registerWebhook(
  plane: ControlPlane,
  webhook: Pick<ServedWebhook, 'baseUrl' | 'token'>,
  options: RegisterOptions = {},
): Promise<void> {
  await applyWebhookConfiguration(
    plane,
    await webhookConfiguration(plane, webhook, options),
    options.name ?? DEFAULT_WEBHOOK_NAME,
  );
}

/** serveWebhook, then registerWebhook: the webhook served and called by the API server, as a test file starts it. */
async function serveAndRegister(
  plane: ControlPlane,
  options: ServeOptions,
  registration: RegisterOptions = {},
): Promise<ServedWebhook> {
  const webhook = await serveWebhook(plane, options);
  await registerWebhook(plane, webhook, registration);
  return webhook;
}

/** One admission the webhook logged, as far as the tests read it. */
interface LoggedAdmission {
  readonly decision: string;
  readonly skipReason?: string;
  readonly stamp?: string;
  readonly patchOperations: number;
}

/** The admissions the webhook logged of the Pod of that name, in order. */
function admissionsOf(webhook: ServedWebhook, pod: string): LoggedAdmission[] {
  return readFileSync(webhook.process.logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes(`"pod":"${pod}"`))
    .map((line) => JSON.parse(line) as LoggedAdmission);
}

export {
  serveWebhook,
  serveAndRegister,
  admissionsOf,
  ruleFolder,
  applyWebhookConfiguration,
  webhookConfiguration,
  webhookCalls,
  metricSum,
  DEFAULT_WEBHOOK_NAME,
};
export type { ServedWebhook, ServeOptions, RegisterOptions, LoggedAdmission };
