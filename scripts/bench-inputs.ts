/**
 * The memory and time of `explain` and `report --objects` on a cluster's worth of objects, for `npm run bench`: a List
 * of 20,000 Deployments (JSON and YAML) and a `kubectl get pods -A -o json` of 100,000 Pods, generated here into a
 * temporary folder (as kubectl prints them: four-space indents, no managedFields), each command run in a fresh process of the built CLI,
 * its peak resident memory read from the process itself at exit. Also `validate .` on this repository.
 * `tsx scripts/bench-inputs.ts` runs it alone.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { buildCli } from './build-cli.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/podmutation.mjs', import.meta.url));
const RULES = fileURLToPath(new URL('../examples/rules', import.meta.url));
/** The memory each command may take (the bound). */
export const MEMORY_TARGET_MB = 300;
/** The time `validate .` may take on this repository. */
export const VALIDATE_TARGET_MS = 2_000;
// Prints the process's peak resident memory (KiB, from getrusage) on stderr as it exits.
const PEAK = `data:text/javascript,process.on('exit',()=>process.stderr.write('peak-rss-kib '+process.resourceUsage().maxRSS+'\\n'))`;

const NAMESPACES = ['production', 'staging', 'batch', 'analytics', 'web'];

function labels(app: string): Record<string, string> {
  return { 'app.kubernetes.io/name': app, 'app.kubernetes.io/component': 'backend', team: 'platform' };
}

function container(app: string): Record<string, unknown> {
  return {
    name: app,
    image: `registry.example.com/${app}:1.27.3`,
    ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
    env: [
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
    ],
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
    readinessProbe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' }, periodSeconds: 10 },
    volumeMounts: [
      { mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', name: 'kube-api-access', readOnly: true },
    ],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
  };
}

function podSpec(app: string): Record<string, unknown> {
  return {
    containers: [container(app)],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: ['legacy'] }] },
          ],
        },
      },
    },
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
    dnsPolicy: 'ClusterFirst',
    restartPolicy: 'Always',
    schedulerName: 'default-scheduler',
    serviceAccountName: 'default',
    terminationGracePeriodSeconds: 30,
    volumes: [
      {
        name: 'kube-api-access',
        projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }] },
      },
    ],
  };
}

function deployment(index: number): Record<string, unknown> {
  const app = `app-${index}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: app,
      namespace: NAMESPACES[index % NAMESPACES.length],
      uid: `00000000-0000-4000-8000-${index.toString().padStart(12, '0')}`,
      generation: 3,
      labels: labels(app),
      annotations: { 'deployment.kubernetes.io/revision': '3' },
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: labels(app) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: { metadata: { labels: labels(app) }, spec: podSpec(app) },
    },
    status: { observedGeneration: 3, replicas: 3, readyReplicas: 3, updatedReplicas: 3, availableReplicas: 3 },
  };
}

function pod(index: number): Record<string, unknown> {
  const app = `app-${Math.floor(index / 5)}`;
  const hash = '7d9f8b6c5d';
  const name = `${app}-${hash}-${index.toString(36).padStart(5, 'x')}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${app}-${hash}-`,
      namespace: NAMESPACES[index % NAMESPACES.length],
      uid: `10000000-0000-4000-8000-${index.toString().padStart(12, '0')}`,
      labels: { ...labels(app), 'pod-template-hash': hash },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-${hash}`,
          uid: 'rs-uid',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      creationTimestamp: '2026-11-30T10:00:00Z',
      resourceVersion: String(100_000 + index),
    },
    spec: {
      ...podSpec(app),
      nodeName: `node-${index % 400}`,
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      hostIP: '10.0.1.17',
      podIP: `10.1.${Math.floor(index / 250) % 250}.${index % 250}`,
      qosClass: 'Burstable',
      startTime: '2026-11-30T10:00:01Z',
      conditions: [
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-11-30T10:00:09Z' },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-11-30T10:00:00Z' },
      ],
      containerStatuses: [
        {
          name: app,
          ready: true,
          restartCount: 0,
          started: true,
          image: `registry.example.com/${app}:1.27.3`,
          imageID: `registry.example.com/${app}@sha256:${'0'.repeat(64)}`,
          containerID: `containerd://${'a'.repeat(64)}`,
          state: { running: { startedAt: '2026-11-30T10:00:05Z' } },
        },
      ],
    },
  };
}

/** Writes the texts to a file one by one, waiting when the file falls behind; returns its size in bytes. */
async function writeTexts(path: string, texts: Iterable<string>): Promise<number> {
  const out = createWriteStream(path);
  for (const text of texts) if (!out.write(text)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
  return out.bytesWritten;
}

/** A List of `count` objects as `kubectl get -o json` prints it, item by item. */
function* jsonList(count: number, item: (index: number) => Record<string, unknown>): Generator<string> {
  yield '{\n    "apiVersion": "v1",\n    "items": [\n';
  for (let index = 0; index < count; index += 1) {
    const text = JSON.stringify(item(index), null, 4).replace(/^/gm, '        ');
    yield index === 0 ? text : `,\n${text}`;
  }
  yield '\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n';
}

/** The same List as `kubectl get -o yaml` prints it (entries unindented under items:). */
function* yamlList(count: number, item: (index: number) => Record<string, unknown>): Generator<string> {
  yield 'apiVersion: v1\nitems:\n';
  for (let index = 0; index < count; index += 1) yield stringify([item(index)]);
  yield 'kind: List\nmetadata:\n  resourceVersion: ""\n';
}

/** One measured command: its wall time and peak resident memory. */
export interface InputRun {
  readonly label: string;
  readonly ms: number;
  readonly peakMb: number;
  readonly code: number | null;
  /** The first line on stderr, which says why when the command did not exit 0. */
  readonly said: string;
}

/** Runs the CLI in a fresh process, stdout discarded, and reads its peak memory from its stderr. */
async function run(label: string, args: readonly string[]): Promise<InputRun> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', PEAK, BIN, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  let first = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (first.length < 300) first += chunk.slice(0, 300);
    stderr = (stderr + chunk).slice(-2_000);
  });
  const [code] = (await once(child, 'close')) as [number | null];
  const ms = performance.now() - started;
  const peak = /peak-rss-kib (\d+)/.exec(stderr);
  if (peak === null) throw new Error(`${label}: no peak memory printed (exit ${code}): ${stderr}`);
  return { label, ms, peakMb: Number(peak[1]) / 1024, code, said: first.split('\n')[0] ?? '' };
}

/** Generates the inputs, then measures explain and report --objects on each, and validate . on the repository. */
export async function measureInputs(): Promise<{ readonly runs: readonly InputRun[]; readonly sizes: string[] }> {
  await buildCli();
  const folder = await mkdtemp(join(tmpdir(), 'podmutation-bench-inputs-'));
  try {
    const deployments = join(folder, 'deployments.json');
    const pods = join(folder, 'pods.json');
    const yaml = join(folder, 'deployments.yaml');
    const sizes = [
      `20,000 Deployments: ${((await writeTexts(deployments, jsonList(20_000, deployment))) / 2 ** 20).toFixed(0)} MiB`,
      `100,000 Pods: ${((await writeTexts(pods, jsonList(100_000, pod))) / 2 ** 20).toFixed(0)} MiB`,
      `20,000 Deployments as YAML: ${((await writeTexts(yaml, yamlList(20_000, deployment))) / 2 ** 20).toFixed(0)} MiB`,
    ];
    // The median of three: one start of a 2-core machine shared with other work says little.
    const validates = [];
    for (let round = 0; round < 3; round += 1)
      validates.push(await run('validate . (this repository)', ['validate', '.']));
    const runs = [validates.sort((left, right) => left.ms - right.ms)[1]!];
    for (const [what, file] of [
      ['20,000 Deployments', deployments],
      ['100,000 Pods', pods],
    ] as const) {
      runs.push(await run(`explain ${what} (table)`, ['explain', '--rules', RULES, file]));
      runs.push(await run(`explain ${what} -o json`, ['explain', '--rules', RULES, '-o', 'json', file]));
      runs.push(await run(`report --objects ${what}`, ['report', '--rules', RULES, '--objects', file, '-A']));
    }
    runs.push(await run('explain 20,000 Deployments as YAML (table)', ['explain', '--rules', RULES, yaml]));
    return { runs, sizes };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The figures as lines. */
export function inputLines({ runs, sizes }: Awaited<ReturnType<typeof measureInputs>>): string[] {
  return [
    `inputs generated: ${sizes.join(', ')}`,
    ...runs.map(
      (item) =>
        `  ${item.label}: ${(item.ms / 1000).toFixed(1)} s, peak ${item.peakMb.toFixed(0)} MB ` +
        `(${(item.peakMb / MEMORY_TARGET_MB).toFixed(2)}x the ${MEMORY_TARGET_MB} MB bound), exit ${item.code}` +
        (item.code === 0 || item.said === '' ? '' : ` (${item.said})`),
    ),
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of inputLines(await measureInputs())) console.log(line);
}
