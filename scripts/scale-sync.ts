/**
 * `npm run scale:sync`: the sync at size, as it ships. The sync Lambda's bundle (built as
 * `npm run build` builds it) runs in a process of its own, a warm container invoked once per sync: it reads its
 * kubeconfig from Secrets Manager, lists the PodMutations 500 a page through @kubernetes/client-node over HTTPS,
 * validates them, publishes the snapshot to DynamoDB over its wire protocol, records the sync and writes status back
 * under the sync lease. Everything it talks to (scale-sync-world.ts: the fake API server, dynalite, the AWS fake and
 * a relay counting AWS calls) runs in another process, so that the time and memory printed are the sync's own.
 * Three syncs: the first of every rule, one with nothing changed, one with a few specs changed. Then the admission
 * function on the published snapshot and on one of 100 rules: its bundle loaded in fresh processes (the cold start:
 * load, then the first invocation's read, validation and compile) and invoked warm (time and bytes logged per call).
 *
 *   npm run scale:sync -- [--rules 5000] [--changed 5] [--cold-runs 5]
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDynamoClient, openRulesTable } from '../lib/store/index.ts';
import type { SyncReport } from '../lib/sync/index.ts';
import { buildFunctions, type FunctionBundle } from './build.ts';
import { median } from './measure.ts';
import type { WorldAnswer, WorldRequest } from './scale-sync-world.ts';

const { values } = parseArgs({
  options: {
    rules: { type: 'string', default: '5000' },
    changed: { type: 'string', default: '5' },
    'cold-runs': { type: 'string', default: '5' },
  },
});
const RULES = Number(values.rules);
const CHANGED = Number(values.changed);
const COLD_RUNS = Number(values['cold-runs']);
const TARGETS = { fullMs: 10_000, unchangedMs: 2_000, peakRssBytes: 256 * 1024 * 1024 };
const CLUSTER_ID = 'scale';
// The rule count `npm run bench` reviews against, for the cold start of a typical cluster.
const TYPICAL_RULES = 100;
const WEBHOOK_TOKEN = 'ScaleSyncColdStartToken0123456789abcdefghijklmnop';
const MIB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

type Ready = Extract<WorldAnswer, { kind: 'ready' }>;
type WorldStats = Extract<WorldAnswer, { kind: 'stats' }>;

/** One sync as the runner measured it: the handler's report, wall time, and memory of the runner process. */
interface SyncRun {
  readonly report: SyncReport;
  readonly ms: number;
  /** CPU time of the runner process (user and system) during the sync: less sensitive than wall time to the machine's load. */
  readonly cpuMs: number;
  readonly startRss: number;
  readonly startHeap: number;
  /** Sampled every 20 ms while the sync ran; the event loop is busy at times, so it may miss a short peak. */
  readonly peakRss: number;
  readonly peakHeap: number;
  /** The kernel's high-water mark of the runner's RSS since it started (getrusage), exact. */
  readonly maxRss: number;
}

/** The admission function's cold start (bundle load, first invocation) and its warm invocations after it. */
interface ColdStart {
  readonly rules: number;
  readonly loadMs: number;
  readonly firstMs: number;
  /** Median and 99th percentile of the warm invocations of one process. */
  readonly warmMs: number;
  readonly warmP99Ms: number;
  /** Bytes written to stdout per warm invocation. */
  readonly logBytes: number;
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`scale:sync: ${message}`);
}

/** What the syncs did that they should not have; printed after the figures, and the run then fails. */
const problems: string[] = [];

function expectThat(condition: boolean, message: string): void {
  if (!condition) problems.push(message);
}

/** A child process answering each message with one message, in order. */
interface Conversation<Answer> {
  next(): Promise<Answer>;
  ask(request: unknown): Promise<Answer>;
}

function converse<Answer>(child: ChildProcess, name: string): Conversation<Answer> {
  const waiting: { resolve: (answer: Answer) => void; reject: (error: Error) => void }[] = [];
  let ended: Error | undefined;
  child.on('message', (answer: Answer) => waiting.shift()?.resolve(answer));
  child.on('exit', (code, signal) => {
    ended = new Error(`the ${name} process exited (${signal ?? code})`);
    for (const waiter of waiting.splice(0)) waiter.reject(ended);
  });
  const next = () =>
    new Promise<Answer>((resolve, reject) => (ended === undefined ? waiting.push({ resolve, reject }) : reject(ended)));
  return {
    next,
    ask(request) {
      const answer = next();
      child.send(request as object);
      return answer;
    },
  };
}

async function ask<K extends WorldAnswer['kind']>(
  world: Conversation<WorldAnswer>,
  request: WorldRequest,
  kind: K,
): Promise<Extract<WorldAnswer, { kind: K }>> {
  const answer = await world.ask(request);
  check(answer.kind === kind, `the world answered ${answer.kind} to ${request.kind}`);
  return answer as Extract<WorldAnswer, { kind: K }>;
}

// Loads the sync bundle as the Node.js runtime does and invokes its handler once per message with a manual event
// (one sync), measuring the time and this process's memory around each invocation.
const SYNC_RUNNER = `
const handler = require(process.argv[2]).handler;
const context = { functionName: 'sync', awsRequestId: 'scale-sync', getRemainingTimeInMillis: () => 70000 };
process.on('disconnect', () => process.exit(0));
process.on('message', async () => {
  globalThis.gc?.();
  const start = process.memoryUsage();
  let peakRss = start.rss, peakHeap = start.heapUsed;
  const sample = () => { const usage = process.memoryUsage(); peakRss = Math.max(peakRss, usage.rss); peakHeap = Math.max(peakHeap, usage.heapUsed); };
  const sampler = setInterval(sample, 20);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const report = await handler({}, context);
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  clearInterval(sampler);
  sample();
  process.send({ report, ms, cpuMs: (user + system) / 1000, startRss: start.rss, startHeap: start.heapUsed, peakRss, peakHeap, maxRss: process.resourceUsage().maxRSS * 1024 });
});
`;

// Loads the admission bundle in a fresh process and invokes it with the same API Gateway event: the first invocation
// reads the pointer and every part, validates and compiles the rules, then reviews; then WARM_INVOCATIONS warm ones,
// timed one by one, with the bytes the bundle writes to stdout (its log line and metrics, which Lambda ships to
// CloudWatch Logs) counted and swallowed.
const COLD_RUNNER = `
const { readFileSync, writeFileSync } = require('node:fs');
const [bundle, eventFile, resultFile, warmInvocations] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
let logBytes = 0;
process.stdout.write = (chunk, encoding, callback) => {
  logBytes += Buffer.byteLength(chunk);
  if (typeof encoding === 'function') encoding(); else if (typeof callback === 'function') callback();
  return true;
};
const loadStarted = performance.now();
const { handler } = require(bundle);
const loadMs = performance.now() - loadStarted;
const context = { functionName: 'admission', awsRequestId: 'cold', getRemainingTimeInMillis: () => 3000 };
(async () => {
  let started = performance.now();
  const first = await handler(event, context);
  const firstMs = performance.now() - started;
  if (first.statusCode !== 200) throw new Error('answered ' + first.statusCode + ' ' + first.body);
  const warm = [];
  logBytes = 0;
  for (let run = 0; run < Number(warmInvocations); run += 1) {
    started = performance.now();
    const answer = await handler(event, context);
    warm.push(performance.now() - started);
    if (answer.statusCode !== 200) throw new Error('answered ' + answer.statusCode + ' ' + answer.body);
  }
  warm.sort((a, b) => a - b);
  const at = (share) => warm[Math.min(warm.length - 1, Math.floor(share * warm.length))];
  writeFileSync(resultFile, JSON.stringify({ loadMs, firstMs, warmMs: at(0.5), warmP99Ms: at(0.99), logBytes: logBytes / warm.length }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
`;
// Enough warm invocations per process for a p99.
const WARM_INVOCATIONS = 200;

/** What both bundles need from Lambda's environment; credentials are the relay's and dynalite's dummies. */
function lambdaEnvironment(functionName: string): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    POWERTOOLS_METRICS_NAMESPACE: 'ScaleSync',
    POWERTOOLS_SERVICE_NAME: functionName,
  };
}

function apiGatewayEvent(body: string): object {
  return {
    version: '2.0',
    routeKey: 'POST /admit/{token}',
    rawPath: `/admit/${WEBHOOK_TOKEN}`,
    rawQueryString: 'timeout=5s',
    headers: { 'content-type': 'application/json' },
    pathParameters: { token: WEBHOOK_TOKEN },
    requestContext: {
      http: { method: 'POST', path: `/admit/${WEBHOOK_TOKEN}` },
      requestId: 'cold',
      routeKey: 'POST /admit/{token}',
      stage: '$default',
      timeEpoch: Date.now(),
    },
    body,
    isBase64Encoded: false,
  };
}

/** COLD_RUNS fresh processes per snapshot, interleaved after one unrecorded round; medians. */
function measureColdStarts(
  folder: string,
  admission: FunctionBundle,
  ready: Ready,
  snapshots: readonly { clusterId: string; rules: number }[],
): ColdStart[] {
  const runner = join(folder, 'cold-runner.cjs');
  const eventFile = join(folder, 'event.json');
  const resultFile = join(folder, 'result.json');
  writeFileSync(runner, COLD_RUNNER);
  writeFileSync(
    eventFile,
    JSON.stringify(
      apiGatewayEvent(
        readFileSync(new URL('../test/fixtures/reviews/deployment-legacy-pool.json', import.meta.url), 'utf8'),
      ),
    ),
  );
  const runs = snapshots.map(() => [] as Omit<ColdStart, 'rules'>[]);
  for (let run = 0; run <= COLD_RUNS; run += 1) {
    snapshots.forEach((snapshot, index) => {
      const env = {
        ...lambdaEnvironment('admission'),
        RULES_TABLE: ready.tableName,
        CLUSTER_ID: snapshot.clusterId,
        DYNAMODB_ENDPOINT: ready.dynamoEndpoint,
        WEBHOOK_TOKEN,
      };
      const result = spawnSync(
        process.execPath,
        [runner, admission.outfile, eventFile, resultFile, String(WARM_INVOCATIONS)],
        { encoding: 'utf8', env },
      );
      check(result.status === 0, `the cold start run failed: ${result.stderr}`);
      if (run > 0) runs[index]!.push(JSON.parse(readFileSync(resultFile, 'utf8')) as Omit<ColdStart, 'rules'>);
    });
  }
  return snapshots.map((snapshot, index) => {
    const of = (key: keyof Omit<ColdStart, 'rules'>) => median(runs[index]!.map((time) => time[key]));
    return {
      rules: snapshot.rules,
      loadMs: of('loadMs'),
      firstMs: of('firstMs'),
      warmMs: of('warmMs'),
      warmP99Ms: of('warmP99Ms'),
      logBytes: of('logBytes'),
    };
  });
}

/** One measured sync and what the world saw of it. */
interface MeasuredSync extends SyncRun {
  readonly name: string;
  readonly world: WorldStats;
  readonly target?: number;
}

/** What the run measured: the world filled, the syncs, the RSS of each process, and the admission cold starts. */
interface Measured {
  readonly filled: Extract<WorldAnswer, { kind: 'filled' }>;
  readonly syncs: readonly MeasuredSync[];
  readonly loadedRss: number;
  readonly coldStarts: readonly ColdStart[];
  readonly worldRss: number;
}

function print({ filled, syncs, loadedRss, coldStarts, worldRss }: Measured): void {
  console.log(
    `sync of ${RULES} PodMutations (${filled.invalid} invalid; ${(filled.jsonBytes / RULES).toFixed(0)} bytes of spec JSON each on average): the shipped sync bundle ` +
      `in its own process (${mib(loadedRss)} RSS once loaded), everything it talks to in another (${mib(worldRss)} RSS at the end)`,
  );
  console.log(
    '| sync | time | CPU time: sync; world | peak RSS (sampled; at the start) | peak heap (sampled; at the start) | API requests: list pages, status writes, TLS connections | AWS calls | target |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const sync of syncs) {
    const calls = Object.entries(sync.world.awsCalls)
      .map(([action, count]) => `${count} ${action.replace(/^[a-z]+:/, '')}`)
      .join(', ');
    const targets = [
      ...(sync.target === undefined
        ? []
        : [
            `under ${seconds(sync.target)}: ${sync.ms < sync.target ? 'met' : 'MISSED'} (${(sync.ms / sync.target).toFixed(2)}x)`,
          ]),
      ...(sync.target === TARGETS.fullMs
        ? [
            `peak RSS under ${mib(TARGETS.peakRssBytes)}: ${sync.maxRss < TARGETS.peakRssBytes ? 'met' : 'MISSED'} (${mib(sync.maxRss)}, kernel high-water mark, ${(sync.maxRss / TARGETS.peakRssBytes).toFixed(2)}x)`,
          ]
        : []),
    ];
    console.log(
      `| ${sync.name}: ${sync.report.outcome} | ${seconds(sync.ms)} | ${seconds(sync.cpuMs)}; ${seconds(sync.world.cpuMs)} | ${mib(sync.peakRss)} (${mib(sync.startRss)}) | ${mib(sync.peakHeap)} (${mib(sync.startHeap)}) | ` +
        `${sync.world.listRequests}, ${sync.world.statusPatches}, ${sync.world.connections} | ${calls} | ${targets.join('; ')} |`,
    );
  }
  console.log(
    `\nadmission function: the shipped bundle in fresh processes, then ${WARM_INVOCATIONS} warm invocations each (medians of ${COLD_RUNS} processes)`,
  );
  console.log(
    '| snapshot | bundle load | first invocation (pointer, parts, validate, compile, review) | cold start over a warm invocation | warm invocation: median, p99 | stdout per warm invocation |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const cold of coldStarts) {
    console.log(
      `| ${cold.rules} rules | ${cold.loadMs.toFixed(0)} ms | ${cold.firstMs.toFixed(0)} ms | ${(cold.loadMs + cold.firstMs - cold.warmMs).toFixed(0)} ms | ` +
        `${cold.warmMs.toFixed(2)} ms, ${cold.warmP99Ms.toFixed(2)} ms | ${cold.logBytes.toFixed(0)} bytes |`,
    );
  }
}

const worldProcess = fork(new URL('./scale-sync-world.ts', import.meta.url).pathname, {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const world = converse<WorldAnswer>(worldProcess, 'world');
const folder = mkdtempSync(join(tmpdir(), 'podmutation-scale-sync-'));
let syncProcess: ChildProcess | undefined;
try {
  const ready = (await world.next()) as Ready;
  check(ready.kind === 'ready', `the world started with ${ready.kind}`);
  const filled = await ask(world, { kind: 'fill', rules: RULES }, 'filled');
  const bundles = await buildFunctions({ outdir: folder });
  const bundle = (name: string) => {
    const found = bundles.find((candidate) => candidate.name === name);
    check(found !== undefined, `the build wrote no ${name} bundle`);
    return found;
  };

  writeFileSync(join(folder, 'sync-runner.cjs'), SYNC_RUNNER);
  syncProcess = fork(join(folder, 'sync-runner.cjs'), [bundle('sync').outfile], {
    execArgv: ['--expose-gc'],
    // The bundle's Powertools log and metric lines are not what is measured.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      ...lambdaEnvironment('sync'),
      AWS_ENDPOINT_URL: ready.awsEndpoint,
      RULES_TABLE: ready.tableName,
      CLUSTER_ID: CLUSTER_ID,
      KUBECONFIG_SECRET_ARN: ready.kubeconfigSecretArn,
    },
  });
  const runner = converse<SyncRun>(syncProcess, 'sync');
  const syncs: MeasuredSync[] = [];
  const sync = async (name: string, target?: number): Promise<MeasuredSync> => {
    const run = await runner.ask({});
    const measured = {
      ...run,
      name,
      world: await ask(world, { kind: 'stats' }, 'stats'),
      ...(target === undefined ? {} : { target }),
    };
    syncs.push(measured);
    return measured;
  };

  const full = await sync(`first sync of ${RULES} rules`, TARGETS.fullMs);
  check(full.report.outcome === 'published', `the first sync ended ${full.report.outcome}: ${full.report.error ?? ''}`);
  expectThat(
    full.report.valid + full.report.invalid === RULES && full.report.invalid === filled.invalid,
    `the first sync counted ${full.report.valid} valid and ${full.report.invalid} invalid`,
  );
  expectThat(
    full.world.statusPatches === RULES && full.report.statusPatched === RULES,
    `the first sync wrote ${full.world.statusPatches} statuses (${full.report.statusSkipped} left for the next sync), expected ${RULES}`,
  );

  const unchanged = await sync('nothing changed', TARGETS.unchangedMs);
  expectThat(unchanged.report.outcome === 'unchanged', `the unchanged sync ended ${unchanged.report.outcome}`);
  expectThat(unchanged.world.statusPatches === 0, `the unchanged sync wrote ${unchanged.world.statusPatches} statuses`);

  const { names } = await ask(world, { kind: 'change', count: CHANGED }, 'changed');
  const changed = await sync(`${names.length} specs changed`);
  expectThat(changed.report.outcome === 'published', `the sync after changes ended ${changed.report.outcome}`);
  expectThat(
    JSON.stringify([...changed.world.patchedNames].sort()) === JSON.stringify([...names].sort()),
    `the sync after changes wrote the statuses of ${changed.world.patchedNames.length} rules, expected exactly the ${names.length} changed`,
  );

  // A snapshot of the typical size beside the one just published, made of its first rules.
  const client = createDynamoClient({ endpoint: ready.dynamoEndpoint });
  const table = { client, tableName: ready.tableName };
  const published = await openRulesTable({ ...table, clusterId: CLUSTER_ID }).snapshots.read();
  check(published !== undefined, 'nothing was published');
  const typicalId = `${CLUSTER_ID}-${TYPICAL_RULES}`;
  await openRulesTable({ ...table, clusterId: typicalId }).snapshots.publish({
    ...published,
    rules: published.rules.slice(0, TYPICAL_RULES),
    invalid: [],
  });
  client.destroy();
  const coldStarts = measureColdStarts(folder, bundle('admission'), ready, [
    { clusterId: typicalId, rules: TYPICAL_RULES },
    { clusterId: CLUSTER_ID, rules: published.rules.length },
  ]);
  const { rssBytes } = await ask(world, { kind: 'stats' }, 'stats');
  print({ filled, syncs, loadedRss: full.startRss, coldStarts, worldRss: rssBytes });
  for (const problem of problems) console.error(`scale:sync: ${problem}`);
  if (problems.length > 0) process.exitCode = 1;
} finally {
  syncProcess?.disconnect();
  worldProcess.send({ kind: 'close' } satisfies WorldRequest);
  rmSync(folder, { recursive: true, force: true });
}
