/** What the cluster bench records of each mechanism over its rounds, and the figures it prints from that. */
import type { ControlPlane } from '../../test/real-cluster/control-plane.ts';
import { median } from '../measure.ts';
import { cpuReading, cpuSpent } from './cpu.ts';
import type { Created } from './creators.ts';
import {
  histogramDelta,
  histogramOf,
  histogramQuantile,
  histogramTotal,
  observations,
  sampleQuantile,
  type Histogram,
  type Quantile,
} from './histogram.ts';
import type { Mechanism } from './mechanisms.ts';

/** The webhook latency histogram of the API server, per webhook name and operation. */
export const WEBHOOK_METRIC = 'apiserver_admission_webhook_admission_duration_seconds';
/** The latency of the whole mutating admission phase (plugins, policies and webhooks), per operation. */
export const ADMIT_STEP_METRIC = 'apiserver_admission_step_admission_duration_seconds';

/** A mechanism's measurements, summed over its rounds. */
export interface Measured {
  readonly mechanism: Mechanism;
  webhook: Histogram | undefined;
  admitStep: Histogram | undefined;
  readonly clientMs: number[];
  wallMs: number;
  failed: number;
  firstFailure: string;
  mutated: number;
  /** CPU milliseconds per process (apiserver, etcd, the mechanism's own, the creators) over the measured Pods. */
  readonly cpuMs: Map<string, number>;
}

/** The API server's view at one moment: the two histograms of the mechanism, and the processes' CPU. */
export interface Reading {
  readonly webhook: Histogram;
  readonly admitStep: Histogram;
  readonly cpu: Map<string, number>;
}

/** Reads the histograms and CPU times that a round's delta is taken of. */
export async function takeReading(plane: ControlPlane, mechanism: Mechanism): Promise<Reading> {
  const metrics = await plane.metrics();
  const pid = (name: string): number | undefined => plane.components.find((component) => component.name === name)?.pid;
  const webhook = mechanism.webhooks
    .map((name) => histogramOf(metrics, WEBHOOK_METRIC, { name, operation: 'CREATE' }))
    .reduce<Histogram | undefined>(
      (total, next) => (next.bounds.length === 0 ? total : histogramTotal(total, next)),
      undefined,
    );
  return {
    webhook: webhook ?? { bounds: [], cumulative: [], sum: 0 },
    admitStep: histogramOf(metrics, ADMIT_STEP_METRIC, { type: 'admit', operation: 'CREATE' }),
    cpu: cpuReading({
      'kube-apiserver': pid('kube-apiserver'),
      etcd: pid('etcd'),
      mechanism: mechanism.pid(),
      creators: process.pid,
    }),
  };
}

/** A new, empty record of a mechanism. */
export function measuring(mechanism: Mechanism): Measured {
  return {
    mechanism,
    webhook: undefined,
    admitStep: undefined,
    clientMs: [],
    wallMs: 0,
    failed: 0,
    firstFailure: '',
    mutated: 0,
    cpuMs: new Map(),
  };
}

/** Adds one round: its creations, the readings around them and how many stored Pods carry the migration. */
export function addRound(
  entry: Measured,
  round: { created: Created; before: Reading; after: Reading; mutated: number },
) {
  const { created, before, after } = round;
  if (after.webhook.bounds.length > 0)
    entry.webhook = histogramTotal(entry.webhook, histogramDelta(after.webhook, before.webhook));
  entry.admitStep = histogramTotal(entry.admitStep, histogramDelta(after.admitStep, before.admitStep));
  entry.clientMs.push(...created.clientMs);
  entry.wallMs += created.wallMs;
  entry.failed += created.failures.length;
  if (entry.firstFailure === '' && created.failures.length > 0) entry.firstFailure = created.failures[0]!;
  entry.mutated += round.mutated;
  for (const [name, spent] of cpuSpent(after.cpu, before.cpu))
    entry.cpuMs.set(name, (entry.cpuMs.get(name) ?? 0) + spent);
}

/** The printed figures of one mechanism. */
export interface Figures {
  readonly entry: Measured;
  readonly createP50: number;
  readonly createP99: number;
  readonly createMean: number;
  readonly podsPerSecond: number;
  readonly webhook?: {
    readonly calls: number;
    readonly p50: Quantile;
    readonly p99: Quantile;
    readonly meanMs: number;
  };
  readonly admitMeanMs: number;
  /** CPU milliseconds per Pod, by process. */
  readonly cpuPerPod: ReadonlyMap<string, number>;
}

/** The figures of a mechanism's measurements. */
export function figuresOf(entry: Measured): Figures {
  const pods = entry.clientMs.length;
  const webhook = entry.webhook !== undefined && observations(entry.webhook) > 0 ? entry.webhook : undefined;
  const admit = entry.admitStep!;
  return {
    entry,
    createP50: median(entry.clientMs),
    createP99: sampleQuantile(0.99, entry.clientMs),
    createMean: entry.clientMs.reduce((sum, value) => sum + value, 0) / pods,
    podsPerSecond: (pods / entry.wallMs) * 1000,
    ...(webhook === undefined
      ? {}
      : {
          webhook: {
            calls: observations(webhook),
            p50: histogramQuantile(0.5, webhook),
            p99: histogramQuantile(0.99, webhook),
            meanMs: (webhook.sum / observations(webhook)) * 1000,
          },
        }),
    admitMeanMs: (admit.sum / Math.max(1, observations(admit))) * 1000,
    cpuPerPod: new Map([...entry.cpuMs].map(([name, spent]) => [name, spent / pods])),
  };
}
