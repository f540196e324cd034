/**
 * `npm run bench:cluster`: every way of making the migration's change, as the real API server sees it. Starts the
 * real-cluster suite's control plane (test/real-cluster) and measures, on it and alternating in rounds so that load
 * from elsewhere falls on all alike: no mutating admission (the floor); a webhook that allows without reading
 * anything; the same answering with the patch `podmutation serve` answers (the API server's cost of a patch);
 * `podmutation serve --rules examples/rules`; a MutatingAdmissionPolicy making the same change; Kyverno's admission
 * controller with a mutate policy making it. Concurrent creators POST checkout Pods; each mechanism's creators' p50
 * and p99 (exact), the API server's histograms, Pods per second and the processes' CPU per Pod are printed, with
 * ratios to the floor and to MAP. No assertion on time. Stops everything it started, on failure too.
 *
 * Flags: --pods N (per mechanism, default 600), --concurrency C (creators, default 4), --rounds R (default 3),
 * --only a,b (mechanism keys: floor, allow, allow-patch, serve, map, kyverno), --serve-flag F (repeatable, passed to
 * `podmutation serve`), --profile DIR (CPU profiles of the webhook processes, DIR/NAME-PID.cpuprofile; profile-preload.mjs).
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parseResourceDocuments } from '../../lib/rule-files/index.ts';
import type { Json } from '../../test/real-cluster/api.ts';
import { controlPlaneBinaries } from '../../test/real-cluster/binaries.ts';
import { startControlPlane } from '../../test/real-cluster/control-plane.ts';
import { buildCli } from '../build-cli.ts';
import {
  checkoutPod,
  createPods,
  deletePods,
  NAMESPACE,
  mutatedPods,
  type PodOwner,
  type PodTemplate,
} from './creators.ts';
import { waitFor } from '../../test/real-cluster/processes.ts';
import {
  addRound,
  ADMIT_STEP_METRIC,
  figuresOf,
  measuring,
  takeReading,
  WEBHOOK_METRIC,
  type Measured,
} from './measured.ts';
import { lambdaHandlerCost } from './lambda-cost.ts';
import {
  allowAll,
  floor,
  kyvernoPolicy,
  mutatingAdmissionPolicy,
  podmutationServe,
  probeReview,
  servedPatch,
  type BenchCluster,
  type Mechanism,
} from './mechanisms.ts';
import { apiServerTable, cpuTable, creationTable, overheadLines, resolutionLines } from './table.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHECKOUT = join(ROOT, 'examples', 'tests', 'migrate-legacy-pool', 'resources', 'checkout.yaml');
// Pods created after each switch and before the first reading: connections and caches warm, not measured.
const WARM_UP_PODS = 20;
const PROFILE_PRELOAD = fileURLToPath(new URL('profile-preload.mjs', import.meta.url));
const MECHANISMS = ['floor', 'allow', 'allow-patch', 'serve', 'map', 'kyverno'] as const;

type MechanismKey = (typeof MECHANISMS)[number];

interface BenchOptions {
  readonly pods: number;
  readonly concurrency: number;
  readonly rounds: number;
  readonly only: ReadonlySet<MechanismKey>;
  readonly serveFlags: readonly string[];
  readonly profileDir: string | undefined;
}

const progress = (line: string): void => void process.stderr.write(`[bench:cluster] ${line}\n`);
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

function benchOptions(argv: readonly string[]): BenchOptions | string {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      pods: { type: 'string', default: '600' },
      concurrency: { type: 'string', default: '4' },
      rounds: { type: 'string', default: '3' },
      only: { type: 'string', default: MECHANISMS.join(',') },
      'serve-flag': { type: 'string', multiple: true, default: [] },
      profile: { type: 'string' },
    },
  });
  const [pods, concurrency, rounds] = [Number(values.pods), Number(values.concurrency), Number(values.rounds)];
  if (![pods, concurrency, rounds].every((value) => Number.isInteger(value) && value > 0) || pods % rounds !== 0)
    return '--pods, --concurrency and --rounds must be positive whole numbers, --pods a multiple of --rounds';
  const only = values.only.split(',').map((key) => key.trim());
  const unknown = only.filter((key) => !(MECHANISMS as readonly string[]).includes(key));
  if (unknown.length > 0) return `--only: unknown mechanism ${unknown.join(', ')} (known: ${MECHANISMS.join(', ')})`;
  if (!only.includes('floor')) return '--only must include floor: every figure is a ratio to it';
  return {
    pods,
    concurrency,
    rounds,
    only: new Set(only as MechanismKey[]),
    serveFlags: values['serve-flag'],
    profileDir: values.profile === undefined ? undefined : resolve(values.profile),
  };
}

/**
 * The production namespace, and the checkout Deployment at 0 replicas with the ReplicaSet its controller makes for it:
 * the measured Pods copy the template and name that ReplicaSet as their controller.
 */
async function checkoutTemplate(cluster: BenchCluster): Promise<{ template: PodTemplate; owner: PodOwner }> {
  const { plane } = cluster;
  await plane.ensureNamespace(NAMESPACE);
  const deployment = (parseResourceDocuments(readFileSync(CHECKOUT, 'utf8'), CHECKOUT) as Json[]).find(
    (document) =>
      document.kind === 'Deployment' && (document.metadata as { namespace?: string }).namespace === NAMESPACE,
  )!;
  await plane.admin.json<Json>('POST', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`, {
    body: { ...deployment, spec: { ...(deployment.spec as Json), replicas: 0 } },
  });
  type ReplicaSet = { metadata: { name: string; uid: string; labels: Record<string, string> } };
  const replicaSet = await waitFor('the checkout ReplicaSet', async () =>
    (
      await plane.admin.json<{ items: ReplicaSet[] }>('GET', `/apis/apps/v1/namespaces/${NAMESPACE}/replicasets`)
    ).items.find((item) => item.metadata.name.startsWith('checkout-')),
  );
  const { name, uid, labels } = replicaSet.metadata;
  return {
    template: (deployment.spec as { template: PodTemplate }).template,
    owner: { name, uid, templateHash: labels['pod-template-hash']! },
  };
}

/**
 * Stops (SIGSTOP) the controller manager and the scheduler while Pods are measured, and resumes them (SIGCONT) when
 * the bench ends: neither takes part in admission, and the ReplicaSet controller would otherwise delete the Pods its
 * ReplicaSet of 0 replicas finds, competing for the cores.
 */
function pauseControllers(cluster: BenchCluster): void {
  const paused = cluster.plane.components.filter(
    (component) =>
      ['kube-controller-manager', 'kube-scheduler'].includes(component.name) && component.pid !== undefined,
  );
  for (const component of paused) process.kill(component.pid!, 'SIGSTOP');
  cluster.cleanups.push(() => {
    for (const component of paused) process.kill(component.pid!, 'SIGCONT');
    return Promise.resolve();
  });
}

/** Every mechanism `--only` asks for, started and switched off, the floor first. */
async function startMechanisms(cluster: BenchCluster, options: BenchOptions, review: Json): Promise<Mechanism[]> {
  const wanted = (key: MechanismKey): boolean => options.only.has(key);
  const started: Mechanism[] = [floor()];
  // The Node webhooks started from here on are profiled when asked (their environment is this process's).
  const nodeOptions = process.env.NODE_OPTIONS;
  if (options.profileDir !== undefined) {
    await mkdir(options.profileDir, { recursive: true });
    process.env.NODE_OPTIONS = `--import ${pathToFileURL(PROFILE_PRELOAD).href}`;
    process.env.BENCH_PROFILE_DIR = options.profileDir;
  }
  if (wanted('allow')) started.push(await allowAll(cluster));
  if (wanted('serve') || wanted('allow-patch')) {
    const serve = await podmutationServe(cluster, join(ROOT, 'examples', 'rules'), options.serveFlags);
    if (wanted('allow-patch')) started.push(await allowAll(cluster, await servedPatch(cluster, serve.served, review)));
    if (wanted('serve')) started.push(serve.mechanism);
  }
  if (options.profileDir !== undefined) {
    if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = nodeOptions;
    delete process.env.BENCH_PROFILE_DIR;
  }
  if (wanted('map')) started.push(mutatingAdmissionPolicy(cluster));
  if (wanted('kyverno')) started.push(await kyvernoPolicy(cluster, progress));
  return started;
}

/** One mechanism's round: switched on, warmed up, measured, its Pods deleted, switched off. */
async function measureRound(
  cluster: BenchCluster,
  entry: Measured,
  round: { readonly index: number; readonly slot: number; readonly pods: number; readonly concurrency: number },
  pod: (name: string) => Json,
): Promise<void> {
  const { plane } = cluster;
  const { mechanism } = entry;
  await mechanism.enable();
  const prefix = `bench-${round.index}-${round.slot}`;
  await createPods(plane, { count: WARM_UP_PODS, concurrency: round.concurrency, prefix: `${prefix}-warm-up` }, pod);
  const before = await takeReading(plane, mechanism);
  const created = await createPods(plane, { count: round.pods, concurrency: round.concurrency, prefix }, pod);
  const after = await takeReading(plane, mechanism);
  addRound(entry, { created, before, after, mutated: await mutatedPods(plane, prefix) });
  progress(
    `round ${round.index + 1}, ${mechanism.label}: ${round.pods} Pods in ${(created.wallMs / 1000).toFixed(1)} s`,
  );
  await deletePods(plane);
  await mechanism.disable();
}

function printResults(measured: readonly Measured[], options: BenchOptions, release: string, loadAtStart: string) {
  const all = measured.map(figuresOf);
  const floorFigures = all[0]!;
  const map = all.find((figures) => figures.entry.mechanism.label.startsWith('MutatingAdmissionPolicy'));
  console.log(
    `node ${process.version}, ${cpus().length} cores, load average ${loadAtStart} at the start and ${load()} at the end; Kubernetes ${release}, one API server on loopback`,
  );
  console.log(
    `${options.pods} checkout Pods per mechanism (examples/tests/migrate-legacy-pool/resources/checkout.yaml, namespace ${NAMESPACE}, owned by the ReplicaSet of the checkout Deployment at 0 replicas, no scheduler serving them, controller manager and scheduler paused), ` +
      `${options.concurrency} concurrent creators, ${options.rounds} alternating rounds after ${WARM_UP_PODS} warm-up Pods each; webhooks with failurePolicy Fail\n`,
  );
  for (const line of creationTable(all, floorFigures, map)) console.log(line);
  console.log("added latency by the creators' mean:");
  for (const line of overheadLines(all, floorFigures, map)) console.log(line);
  console.log(
    "create: each Pod's POST as its creator timed it (exact: every admission step and the etcd write); -floor: the p50 over the floor's; (-floor)/MAP: that, over MAP's; Pods/s: Pods / creation wall time\n",
  );
  for (const line of apiServerTable(all, floorFigures)) console.log(line);
  console.log(
    `admit: ${ADMIT_STEP_METRIC} (type admit, operation CREATE), the whole mutating phase, by its _sum / _count; hook: ${WEBHOOK_METRIC} (operation CREATE), p50 and p99 interpolated within buckets as histogram_quantile, so only known within their bucket:`,
  );
  for (const line of resolutionLines(all)) console.log(line);
  console.log('');
  for (const line of cpuTable(all)) console.log(line);
  console.log(
    'CPU: user + system time of each process (/proc/PID/stat) over the measured Pods, per Pod; mechanism: the webhook process, none for the floor and MAP (inside the API server)',
  );
  return all;
}

async function main(argv: readonly string[]): Promise<number> {
  const options = benchOptions(argv);
  if (typeof options === 'string') {
    console.error(`bench:cluster: ${options}`);
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
    let pod: (name: string) => Json = () => ({});
    const cluster: BenchCluster = { plane, probePod: () => pod(`probe-${Date.now()}`), cleanups };
    const { template, owner } = await checkoutTemplate(cluster);
    pod = (name) => checkoutPod(template, owner, name);
    const review = await probeReview(cluster);
    const measured = (await startMechanisms(cluster, options, review)).map(measuring);
    pauseControllers(cluster);
    const perRound = options.pods / options.rounds;
    for (let index = 0; index < options.rounds; index += 1)
      for (const [slot, entry] of measured.entries())
        await measureRound(cluster, entry, { index, slot, pods: perRound, concurrency: options.concurrency }, pod);
    printResults(measured, options, binaries.release, loadAtStart);
    const lambda = await lambdaHandlerCost(review);
    console.log(
      `\nthe admission Lambda's handler in process (dist/admission bundle, warm, its log and metrics to /dev/null), the same Pod's review, ${lambda.calls} calls: ` +
        `${lambda.medianMs.toFixed(3)} ms median, ${lambda.meanMs.toFixed(3)} ms mean, ${lambda.cpuMs.toFixed(3)} ms CPU per admission`,
    );
    const failed = measured.find((entry) => entry.failed > 0);
    if (failed !== undefined) {
      console.log(`\nfailed creations under ${failed.mechanism.label}: ${failed.firstFailure}`);
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
