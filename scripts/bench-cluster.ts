/**
 * `npm run bench:cluster`: the webhook's admission latency as a real API server measures it. Starts the real-cluster
 * suite's control plane (test/real-cluster), serves `podmutation serve --rules examples/rules` over HTTPS and, for
 * comparison, a minimal Node HTTPS webhook that answers `allowed: true` without reading anything, with the same
 * certificate setup and connection limits. Each is registered alone in turn (failurePolicy Fail, so a failed call is
 * a failed creation) while concurrent creators POST checkout Pods to the API server; the API server's
 * apiserver_admission_webhook_admission_duration_seconds histogram (its delta over the measured Pods) gives each
 * webhook's p50 and p99, interpolated within buckets as Prometheus's histogram_quantile does. The two webhooks
 * alternate in rounds, so that load from elsewhere falls on both alike; printed as ratios, with the creators' own
 * end-to-end latency and Pod creation rate. No assertion on time. Stops everything it started, on failure too.
 *
 * Flags: --pods N (per webhook, default 1000), --concurrency C (creators, default 4), --rounds R (default 2).
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { generateToken } from '../lib/endpoint/index.ts';
import { CONNECTION_LIMITS, MAX_CONNECTIONS } from '../lib/local-server/index.ts';
import { parseResourceDocuments } from '../lib/rule-files/index.ts';
import type { Json } from '../test/real-cluster/api.ts';
import { controlPlaneBinaries } from '../test/real-cluster/binaries.ts';
import { servingCertificate } from '../test/real-cluster/certificates.ts';
import { startControlPlane, type ControlPlane } from '../test/real-cluster/control-plane.ts';
import { freePort, startSupervised, waitFor } from '../test/real-cluster/processes.ts';
import {
  applyWebhookConfiguration,
  DEFAULT_WEBHOOK_NAME,
  serveWebhook,
  webhookConfiguration,
} from '../test/real-cluster/webhook.ts';
import { buildCli } from './build-cli.ts';
import { median } from './measure.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHECKOUT = join(ROOT, 'examples', 'tests', 'migrate-legacy-pool', 'resources', 'checkout.yaml');
const METRIC = 'apiserver_admission_webhook_admission_duration_seconds';
const ALLOW_ALL_NAME = 'allow.podmutation.test';
const NAMESPACE = 'production';
// No scheduler serves it: the Pods stay Pending, so neither the scheduler nor the kubelet stand-in competes for the cores.
const UNSERVED_SCHEDULER = 'bench-unscheduled';
// Pods created after each registration and before the histogram is read: connections and caches warm, not measured.
const WARM_UP_PODS = 20;

/** One webhook under measurement, as webhook-config takes it. */
interface Target {
  readonly label: string;
  readonly name: string;
  readonly baseUrl: string;
  readonly token: string;
}

/** A cumulative histogram: counts at or below each bound, the last bound +Inf. */
interface Histogram {
  readonly bounds: readonly number[];
  readonly cumulative: readonly number[];
  readonly sum: number;
}

/** A quantile and the bucket it lies in. */
interface Quantile {
  readonly value: number;
  readonly lower: number;
  readonly upper: number;
}

/** What one webhook's Pods measured, summed over rounds. */
interface Measured {
  histogram: Histogram | undefined;
  readonly clientMs: number[];
  wallMs: number;
  failed: number;
  firstFailure: string;
  mutated: number;
}

/** One webhook's figures, as printed. */
interface Row {
  readonly target: Target;
  readonly entry: Measured;
  readonly histogram: Histogram;
  readonly p50: Quantile;
  readonly p99: Quantile;
  readonly clientP50: number;
  readonly clientP99: number;
  readonly rate: number;
}

function labelsOf(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1]!, match[2]!]));
}

/** The CREATE histogram of the named webhook (summed over its series: rejected or not), from /metrics text. */
function webhookHistogram(metrics: string, name: string): Histogram {
  const buckets = new Map<number, number>();
  let sum = 0;
  for (const line of metrics.split('\n')) {
    const match = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match === null || !match[1]!.startsWith(METRIC)) continue;
    const labels = labelsOf(match[2]!);
    if (labels.name !== name || labels.operation !== 'CREATE') continue;
    const value = Number(match[3]);
    if (match[1] === `${METRIC}_bucket`) {
      const bound = labels.le === '+Inf' ? Infinity : Number(labels.le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value);
    } else if (match[1] === `${METRIC}_sum`) sum += value;
  }
  const bounds = [...buckets.keys()].sort((left, right) => left - right);
  return { bounds, cumulative: bounds.map((bound) => buckets.get(bound)!), sum };
}

/** after minus before; a histogram with no series yet counts as zeros of the same buckets. */
function histogramDelta(after: Histogram, before: Histogram): Histogram {
  return {
    bounds: after.bounds,
    cumulative: after.cumulative.map(
      (count, index) => count - (before.bounds.length === 0 ? 0 : before.cumulative[index]!),
    ),
    sum: after.sum - before.sum,
  };
}

function histogramTotal(left: Histogram | undefined, right: Histogram): Histogram {
  if (left === undefined) return right;
  return {
    bounds: right.bounds,
    cumulative: right.cumulative.map((count, index) => count + left.cumulative[index]!),
    sum: left.sum + right.sum,
  };
}

function observations(histogram: Histogram): number {
  return histogram.cumulative.at(-1) ?? 0;
}

/**
 * The q-quantile by linear interpolation within the bucket holding the rank, as Prometheus's histogram_quantile
 * (promql/quantile.go bucketQuantile): the first bucket starts at 0, a rank in the +Inf bucket gives the highest
 * finite bound. Also returns the bucket, whose width is the figure's resolution.
 */
function histogramQuantile(q: number, histogram: Histogram): Quantile {
  const { bounds, cumulative } = histogram;
  const rank = q * observations(histogram);
  const bucket = cumulative.findIndex((count, index) => index < bounds.length - 1 && count >= rank);
  if (bucket === -1) {
    const highest = bounds[bounds.length - 2]!;
    return { value: highest, lower: highest, upper: Infinity };
  }
  const lower = bucket === 0 ? 0 : bounds[bucket - 1]!;
  const below = bucket === 0 ? 0 : cumulative[bucket - 1]!;
  const upper = bounds[bucket]!;
  return { value: lower + ((upper - lower) * (rank - below)) / (cumulative[bucket]! - below), lower, upper };
}

/** The q-quantile of exact samples (nearest rank). */
function sampleQuantile(q: number, samples: readonly number[]): number {
  const sorted = [...samples].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

// The allow-all webhook: parses the review for its uid and allows it. Node's HTTPS server with the limits of
// `podmutation serve` (lib/local-server CONNECTION_LIMITS, MAX_CONNECTIONS), so only what happens inside differs.
const ALLOW_ALL_SOURCE = `import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
const [cert, key, port] = process.argv.slice(2);
const server = createServer({ ...${JSON.stringify(CONNECTION_LIMITS)}, cert: readFileSync(cert), key: readFileSync(key) }, (request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } });
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
});
server.maxConnections = ${MAX_CONNECTIONS};
server.listen(Number(port), '127.0.0.1', () => console.log('allow-all listening'));
`;

async function serveAllowAll(plane: ControlPlane, cleanups: (() => Promise<void>)[]): Promise<Target> {
  const certificate = await servingCertificate(plane.certificates.ca, 'allow-all-webhook');
  const [script, certFile, keyFile, logFile] = ['allow-all.mjs', 'allow-all.crt', 'allow-all.key', 'allow-all.log'].map(
    (name) => join(plane.dir, name),
  ) as [string, string, string, string];
  await Promise.all([
    writeFile(script, ALLOW_ALL_SOURCE),
    writeFile(certFile, certificate.cert),
    writeFile(keyFile, certificate.key),
  ]);
  const port = await freePort();
  const child = startSupervised('allow-all webhook', process.execPath, [script, certFile, keyFile, String(port)], {
    logFile,
  });
  cleanups.push(() => child.stop());
  await waitFor(
    'the allow-all webhook to listen',
    () => Promise.resolve(readFileSync(logFile, 'utf8').includes('allow-all listening') ? true : undefined),
    {
      failFast: () => (child.exited() === undefined ? undefined : `exited (${child.exited()}):\n${child.logTail()}`),
    },
  );
  return { label: 'allow-all', name: ALLOW_ALL_NAME, baseUrl: `https://127.0.0.1:${port}`, token: generateToken() };
}

/**
 * A checkout Pod of the example whose controller is the Deployment itself: the webhook resolves it to Deployment
 * production/checkout (the migrate-legacy-pool rule matches and patches it) while no controller manages it.
 */
function checkoutPod(template: { metadata: Json; spec: Json }, ownerUid: string, name: string): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: template.metadata.labels,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'checkout', uid: ownerUid, controller: true },
      ],
    },
    spec: { ...template.spec, schedulerName: UNSERVED_SCHEDULER },
  };
}

/** Creates `count` Pods with `concurrency` creators; each Pod's client-side latency, and the failed creations. */
async function createPods(
  plane: ControlPlane,
  count: number,
  concurrency: number,
  pod: (name: string) => Json,
  prefix: string,
) {
  const clientMs: number[] = [];
  const failures: string[] = [];
  let next = 0;
  const creator = async (): Promise<void> => {
    while (next < count) {
      const name = `${prefix}-${next++}`;
      const started = performance.now();
      const answer = await plane.admin.request('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, { body: pod(name) });
      clientMs.push(performance.now() - started);
      if (answer.status !== 201) failures.push(`HTTP ${answer.status}: ${answer.text.slice(0, 200)}`);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, creator));
  return { clientMs, failures, wallMs: performance.now() - started };
}

/** How many of the measured Pods (named `prefix`-N) the API server stored with the rule's annotation. */
async function mutatedPods(plane: ControlPlane, prefix: string): Promise<number> {
  const list = await plane.admin.json<{ items: Json[] }>('GET', `/api/v1/namespaces/${NAMESPACE}/pods`);
  const measured = new RegExp(`^${prefix}-\\d+$`);
  return list.items.filter((item) => {
    const metadata = item.metadata as { name: string; annotations?: Record<string, string> };
    return measured.test(metadata.name) && metadata.annotations?.['example.com/migration'] === 'merged-pool';
  }).length;
}

/** Deletes every Pod of the namespace (unbound Pods go at once) and waits until none is left. */
async function deletePods(plane: ControlPlane): Promise<void> {
  await plane.admin.json('DELETE', `/api/v1/namespaces/${NAMESPACE}/pods`);
  await waitFor(
    'the Pods to be deleted',
    async () =>
      (
        await plane.admin.json<{ items: Json[] }>('GET', `/api/v1/namespaces/${NAMESPACE}/pods`, {
          query: { limit: '1' },
        })
      ).items.length === 0
        ? true
        : undefined,
    { timeoutMs: 120_000, intervalMs: 250 },
  );
}

const progress = (line: string): void => void process.stderr.write(`[bench:cluster] ${line}\n`);
const ms = (seconds: number): string => `${(seconds * 1000).toFixed(1)} ms`;
const bound = (seconds: number): string => (seconds === Infinity ? '+Inf' : `${(seconds * 1000).toFixed(0)} ms`);
const ratio = (value: number): string => `${value.toFixed(2)}x`;
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      pods: { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: '4' },
      rounds: { type: 'string', default: '2' },
    },
  });
  const [pods, concurrency, rounds] = [Number(values.pods), Number(values.concurrency), Number(values.rounds)];
  if (![pods, concurrency, rounds].every((value) => Number.isInteger(value) && value > 0) || pods % rounds !== 0) {
    console.error(
      'bench:cluster: --pods, --concurrency and --rounds must be positive whole numbers, --pods a multiple of --rounds',
    );
    return 2;
  }
  const loadAtStart = load();
  const cleanups: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      for (const cleanup of cleanups.splice(0).reverse())
        await cleanup().catch((error: unknown) => progress(`cleanup failed: ${(error as Error).message}`));
    })());
  const onSignal = (signal: NodeJS.Signals): void => {
    progress(`${signal}: stopping everything`);
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    await buildCli();
    const binaries = await controlPlaneBinaries(progress);
    const plane = await startControlPlane(binaries);
    cleanups.push(() => plane.stop());
    progress(`control plane ${binaries.release} at ${plane.server}`);

    await plane.kubectl(['apply', '-f', '-'], {
      input: stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }),
    });
    await waitFor(`the default ServiceAccount of ${NAMESPACE}`, async () =>
      (await plane.admin.request('GET', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/default`)).status === 200
        ? true
        : undefined,
    );
    const deployment = (parseResourceDocuments(readFileSync(CHECKOUT, 'utf8'), CHECKOUT) as Json[]).find(
      (document) =>
        document.kind === 'Deployment' && (document.metadata as { namespace?: string }).namespace === NAMESPACE,
    )!;
    // The Pods' owner: the real Deployment, with no replicas of its own.
    const owner = await plane.admin.json<Json>('POST', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`, {
      body: { ...deployment, spec: { ...(deployment.spec as Json), replicas: 0 } },
    });
    const ownerUid = (owner.metadata as { uid: string }).uid;
    const template = (deployment.spec as { template: { metadata: Json; spec: Json } }).template;

    const served = await serveWebhook(plane, { rules: [join(ROOT, 'examples', 'rules')] });
    cleanups.push(() => served.stop());
    const targets: Target[] = [
      {
        label: 'podmutation serve (examples/rules)',
        name: DEFAULT_WEBHOOK_NAME,
        baseUrl: served.baseUrl,
        token: served.token,
      },
      await serveAllowAll(plane, cleanups),
    ];
    const configurations = new Map<Target, string>();
    for (const target of targets)
      configurations.set(
        target,
        await webhookConfiguration(plane, target, { name: target.name, failurePolicy: 'Fail' }),
      );
    const measured = new Map<Target, Measured>(
      targets.map((target) => [
        target,
        { histogram: undefined, clientMs: [], wallMs: 0, failed: 0, firstFailure: '', mutated: 0 },
      ]),
    );
    const perRound = pods / rounds;

    for (let round = 0; round < rounds; round += 1) {
      for (const target of targets) {
        for (const other of targets.filter((candidate) => candidate !== target)) {
          await plane.kubectl(['delete', 'mutatingwebhookconfiguration', other.name, '--ignore-not-found']);
        }
        // Waits until the API server calls it; its informer saw the deletion above first, so it calls only this one.
        await applyWebhookConfiguration(plane, configurations.get(target)!, target.name);
        const prefix = `bench-${round}-${target === targets[0] ? 'podmutation' : 'allow'}`;
        const pod = (name: string): Json => checkoutPod(template, ownerUid, name);
        await createPods(plane, WARM_UP_PODS, concurrency, pod, `${prefix}-warm-up`);
        const before = webhookHistogram(await plane.metrics(), target.name);
        const run = await createPods(plane, perRound, concurrency, pod, prefix);
        const after = webhookHistogram(await plane.metrics(), target.name);
        const entry = measured.get(target)!;
        entry.histogram = histogramTotal(entry.histogram, histogramDelta(after, before));
        entry.clientMs.push(...run.clientMs);
        entry.wallMs += run.wallMs;
        entry.failed += run.failures.length;
        if (entry.firstFailure === '' && run.failures.length > 0) entry.firstFailure = run.failures[0]!;
        entry.mutated += await mutatedPods(plane, prefix);
        progress(
          `round ${round + 1}/${rounds}, ${target.label}: ${perRound} Pods in ${(run.wallMs / 1000).toFixed(1)} s`,
        );
        await deletePods(plane);
      }
    }

    const [mine, floor] = targets.map((target) => {
      const entry = measured.get(target)!;
      const histogram = entry.histogram!;
      return {
        target,
        entry,
        histogram,
        p50: histogramQuantile(0.5, histogram),
        p99: histogramQuantile(0.99, histogram),
        clientP50: median(entry.clientMs),
        clientP99: sampleQuantile(0.99, entry.clientMs),
        rate: (entry.clientMs.length / entry.wallMs) * 1000,
      };
    }) as [Row, Row];

    console.log(
      `node ${process.version}, ${cpus().length} cores, load average ${loadAtStart} at the start and ${load()} at the end; Kubernetes ${binaries.release}, one API server on loopback`,
    );
    console.log(
      `${pods} checkout Pods per webhook (examples/tests/migrate-legacy-pool/resources/checkout.yaml, namespace ${NAMESPACE}, owned by a Deployment with 0 replicas), ` +
        `${concurrency} concurrent creators, ${rounds} alternating rounds of ${perRound} after ${WARM_UP_PODS} warm-up Pods each; ` +
        `spec.schedulerName ${UNSERVED_SCHEDULER} (no scheduler serves it: the Pods stay Pending); failurePolicy Fail\n`,
    );
    const meanOf = (row: Row): number => row.histogram.sum / observations(row.histogram);
    console.log(
      [
        'webhook'.padEnd(36),
        'calls'.padStart(6),
        'p50'.padStart(9),
        'p99'.padStart(9),
        'mean'.padStart(9),
        'create p50'.padStart(11),
        'create p99'.padStart(11),
        'Pods/s'.padStart(7),
        'failed'.padStart(7),
        '  mutated',
      ].join(' '),
    );
    for (const row of [mine, floor]) {
      const calls = observations(row.histogram);
      console.log(
        [
          row.target.label.padEnd(36),
          String(calls).padStart(6),
          ms(row.p50.value).padStart(9),
          ms(row.p99.value).padStart(9),
          ms(meanOf(row)).padStart(9),
          `${row.clientP50.toFixed(1)} ms`.padStart(11),
          `${row.clientP99.toFixed(1)} ms`.padStart(11),
          row.rate.toFixed(0).padStart(7),
          String(row.entry.failed).padStart(7),
          `  ${row.entry.mutated}/${row.entry.clientMs.length}`,
        ].join(' '),
      );
    }
    console.log(
      [
        'ratio podmutation / allow-all'.padEnd(36),
        ''.padStart(6),
        ratio(mine.p50.value / floor.p50.value).padStart(9),
        ratio(mine.p99.value / floor.p99.value).padStart(9),
        ratio(meanOf(mine) / meanOf(floor)).padStart(9),
        ratio(mine.clientP50 / floor.clientP50).padStart(11),
        ratio(mine.clientP99 / floor.clientP99).padStart(11),
        ratio(mine.rate / floor.rate).padStart(7),
      ].join(' '),
    );
    console.log(
      `podmutation over allow-all: ${ms(meanOf(mine) - meanOf(floor))} per call by the mean, ` +
        `${(mine.clientP50 - floor.clientP50).toFixed(1)} ms per Pod creation by the creators' p50`,
    );
    console.log(
      `p50, p99: ${METRIC} (name, operation CREATE), interpolated within buckets as histogram_quantile; mean: its _sum / _count; ` +
        'create: the POST of each Pod as its creator timed it (exact, every admission step and the etcd write); Pods/s: Pods / creation wall time',
    );
    const bounds = mine.histogram.bounds;
    console.log(`\nhistogram buckets of the real metric (upper bounds): ${bounds.map(bound).join(', ')}`);
    for (const row of [mine, floor]) {
      const perBucket = row.histogram.cumulative.map(
        (count, index) => count - (index === 0 ? 0 : row.histogram.cumulative[index - 1]!),
      );
      console.log(
        `  ${row.target.label.padEnd(36)} ${perBucket.map((count, index) => `≤${bound(bounds[index]!)}: ${count}`).join('  ')}`,
      );
    }
    console.log(
      'resolution: a quantile is only known to lie in its bucket; within it the figure assumes evenly spread calls',
    );
    for (const row of [mine, floor]) {
      for (const [name, quantile] of [
        ['p50', row.p50],
        ['p99', row.p99],
      ] as const) {
        console.log(
          `  ${row.target.label} ${name} ${ms(quantile.value)} lies in (${bound(quantile.lower)}, ${bound(quantile.upper)}]: ${quantile.upper === Infinity ? 'above the last finite bound' : `a span of ${((quantile.upper - quantile.lower) * 1000).toFixed(0)} ms`}`,
        );
      }
    }
    const sameBuckets = mine.p50.upper === floor.p50.upper && mine.p99.upper === floor.p99.upper;
    console.log(
      sameBuckets
        ? "  both webhooks' p50 and p99 fall in the same buckets: their ratios compare ranks within a bucket, not measured latencies; the mean and the creators' times are finer"
        : "  the webhooks' quantiles fall in different buckets for at least one of p50, p99",
    );
    if (mine.entry.failed + floor.entry.failed > 0) {
      console.log(`\nfailed creations: ${mine.entry.firstFailure || floor.entry.firstFailure}`);
      return 1;
    }
    return 0;
  } finally {
    await stopAll();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

process.exitCode = await main(process.argv.slice(2));
