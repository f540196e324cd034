/**
 * `npm run load`: a load test of the local webhook server on loopback. Starts it programmatically with 100 generated
 * PodMutations (most select other namespaces, a few match the Pod), then runs autocannon in a separate process at 50
 * and 200 connections, POSTing test/fixtures/reviews/deployment-legacy-pool.json, and prints requests/s, p50, p99 and
 * errors. Target: no errors and p99 under 20 ms at 50 connections.
 *
 * Flags: --duration S (seconds per run, default 5).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { LogFields } from '../lib/observability/index.ts';
import { loadRuleFiles } from '../lib/rule-files/index.ts';
import { createFileRuleSource, startLocalServer } from '../lib/local-server/index.ts';

/** What autocannon --json reports that this script prints. */
interface LoadResult {
  readonly requests: { readonly average: number; readonly total: number };
  readonly latency: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
}

const REVIEW_FILE = fileURLToPath(new URL('../test/fixtures/reviews/deployment-legacy-pool.json', import.meta.url));
const CONNECTIONS = [50, 200] as const;
const RULE_COUNT = 100;
const TARGET_P99_MS = 20;
const TARGET_CONNECTIONS = 50;
const RUN_TIMEOUT_MS = 120_000;

/** A PodMutation for a team namespace the load Pod is not in: nodeSelector, toleration and annotation changes. */
function otherTeamRule(index: number): unknown {
  const team = `team-${String(index).padStart(3, '0')}`;
  return {
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodMutation',
    metadata: { name: `${team}-to-pool-${index % 7}` },
    spec: {
      enable: true,
      priority: index % 50,
      workloadSelector: {
        namespaces: [team, `${team}-staging`],
        kinds: index % 2 === 0 ? ['Deployment', 'StatefulSet'] : ['Job', 'CronJob'],
        labelSelector: { matchLabels: { 'app.kubernetes.io/part-of': team } },
      },
      mutationRemove: { nodeSelector: { keys: ['example.com/node-pool'] } },
      mutationAdd: {
        annotations: { 'example.com/owner': team },
        nodeSelector: { 'example.com/node-pool': `pool-${index % 7}` },
        tolerations: [{ key: 'example.com/dedicated', operator: 'Equal', value: team, effect: 'NoSchedule' }],
      },
    },
  };
}

/** PodMutations that match the load Pod (production, Deployment checkout, on the legacy pool). */
function matchingRules(): unknown[] {
  const legacyPool = {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: ['legacy'] }] }],
    },
  };
  const annotate = (name: string, priority: number, annotations: Record<string, string>) => ({
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodMutation',
    metadata: { name },
    spec: {
      enable: true,
      priority,
      workloadSelector: {
        namespaces: ['production'],
        labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'checkout' } },
      },
      mutationAdd: { annotations },
    },
  });
  return [
    {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'migrate-legacy-pool' },
      spec: {
        enable: true,
        priority: 100,
        workloadSelector: {
          namespaces: ['production'],
          kinds: ['Deployment', 'StatefulSet'],
          nodeAffinityMatch: legacyPool,
        },
        mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
        mutationAdd: {
          annotations: { 'example.com/migration': 'merged-pool' },
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: ['merged'] }] },
              ],
            },
          },
        },
      },
    },
    {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'prefer-arm64-checkout' },
      spec: {
        enable: true,
        priority: 90,
        workloadSelector: { namespaces: ['production'], kinds: ['Deployment'] },
        mutationAdd: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 40,
                preference: { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] },
              },
            ],
          },
        },
      },
    },
    annotate('checkout-cost-center', 80, { 'example.com/cost-center': 'shop' }),
    annotate('checkout-team', 70, { 'example.com/team': 'payments' }),
  ];
}

/** Writes RULE_COUNT rules as one multi-document YAML file and checks that every one of them is valid. */
async function writeRules(folder: string): Promise<number> {
  const matching = matchingRules();
  const others = Array.from({ length: RULE_COUNT - matching.length }, (_, index) => otherTeamRule(index));
  const file = join(folder, 'load-rules.yaml');
  await writeFile(file, [...others, ...matching].map((rule) => stringify(rule)).join('---\n'));
  const loaded = await loadRuleFiles([file]);
  if (loaded.invalid.length > 0 || loaded.rules.length !== RULE_COUNT) {
    throw new Error(
      `generated rules: ${loaded.rules.length} valid, ${loaded.invalid.length} invalid; expected ${RULE_COUNT} valid`,
    );
  }
  return matching.length;
}

/** Runs the autocannon CLI in its own process (so it does not share the server's event loop) and parses its JSON. */
function autocannon(url: string, connections: number, durationSeconds: number): Promise<LoadResult> {
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  // One second of warm-up at the same concurrency first, so JIT compilation is not counted as latency.
  const args = [bin, '--json', '--no-progress', '-c', String(connections), '-d', String(durationSeconds)];
  args.push('--warmup', '[', '-c', String(connections), '-d', '3', ']');
  args.push('-m', 'POST', '-H', 'content-type=application/json', '-i', REVIEW_FILE, url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: RUN_TIMEOUT_MS });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}: ${stderr.trim()}`));
      // With --warmup, autocannon prints the warm-up's result on a line of its own before the measured one.
      const lines = stdout.trim().split('\n');
      resolve(JSON.parse(lines.at(-1) ?? '') as LoadResult);
    });
  });
}

function row(cells: readonly (string | number)[]): string {
  return cells.map((cell, index) => String(cell).padStart(index === 0 ? 11 : 12)).join('');
}

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { duration: { type: 'string', default: '5' } } });
  const durationSeconds = Number(values.duration);
  if (!Number.isInteger(durationSeconds) || durationSeconds < 1 || durationSeconds > 60) {
    console.error(`load: --duration is "${values.duration}"; expected whole seconds from 1 to 60`);
    return 2;
  }
  const folder = await mkdtemp(join(tmpdir(), 'podmutation-load-'));
  const matching = await writeRules(folder);
  // Each line is serialised as the deployed logger would, then dropped, so logging stays in the measured cost.
  const logLine = (message: string, fields: LogFields): void => void JSON.stringify({ message, ...fields });
  const server = await startLocalServer({
    rules: createFileRuleSource([folder]),
    port: 0,
    logger: { info: logLine, warn: logLine, error: logLine },
  });
  try {
    const probe = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: await readFile(REVIEW_FILE),
    });
    const probeBody = (await probe.json()) as { response?: { patchType?: string } };
    if (probe.status !== 200 || probeBody.response?.patchType !== 'JSONPatch') {
      throw new Error(`the probe review was answered ${probe.status} without a patch; the load would not be realistic`);
    }
    console.log(
      `local server with ${RULE_COUNT} rules (${matching} match the review), ${durationSeconds} s per run, loopback`,
    );
    console.log(row(['connections', 'requests/s', 'p50 ms', 'p99 ms', 'max ms', 'errors', 'non-2xx']));
    const results: { connections: number; result: LoadResult }[] = [];
    for (const connections of CONNECTIONS) {
      const result = await autocannon(server.url, connections, durationSeconds);
      results.push({ connections, result });
      const errors = result.errors + result.timeouts;
      console.log(
        row([
          connections,
          result.requests.average.toFixed(0),
          result.latency.p50,
          result.latency.p99,
          result.latency.max,
          errors,
          result.non2xx,
        ]),
      );
    }
    const target = results.find((entry) => entry.connections === TARGET_CONNECTIONS)!.result;
    const clean = results.every(({ result }) => result.errors + result.timeouts + result.non2xx === 0);
    const met = clean && target.latency.p99 < TARGET_P99_MS;
    console.log(
      `target (no errors, p99 under ${TARGET_P99_MS} ms at ${TARGET_CONNECTIONS} connections): ${met ? 'met' : 'missed'}`,
    );
    return 0;
  } finally {
    await server.close();
    await rm(folder, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
