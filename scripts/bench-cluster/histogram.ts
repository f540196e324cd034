/**
 * The API server's Prometheus histograms as the cluster bench reads them: a cumulative histogram parsed from /metrics
 * text, its delta over a round, and its quantiles interpolated within buckets as Prometheus's histogram_quantile does.
 */

/** A cumulative histogram: counts at or below each bound, the last bound +Inf. */
export interface Histogram {
  readonly bounds: readonly number[];
  readonly cumulative: readonly number[];
  readonly sum: number;
}

/** A quantile and the bucket it lies in. */
export interface Quantile {
  readonly value: number;
  readonly lower: number;
  readonly upper: number;
}

function labelsOf(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1]!, match[2]!]));
}

/** The histogram `metric` summed over every series whose labels include `labels`, from /metrics text. */
export function histogramOf(metrics: string, metric: string, labels: Readonly<Record<string, string>>): Histogram {
  const buckets = new Map<number, number>();
  let sum = 0;
  for (const line of metrics.split('\n')) {
    const match = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match === null || !match[1]!.startsWith(metric)) continue;
    const found = labelsOf(match[2]!);
    if (!Object.entries(labels).every(([name, value]) => found[name] === value)) continue;
    const value = Number(match[3]);
    if (match[1] === `${metric}_bucket`) {
      const bound = found.le === '+Inf' ? Infinity : Number(found.le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value);
    } else if (match[1] === `${metric}_sum`) sum += value;
  }
  const bounds = [...buckets.keys()].sort((left, right) => left - right);
  return { bounds, cumulative: bounds.map((bound) => buckets.get(bound)!), sum };
}

/** after minus before; a histogram with no series yet counts as zeros of the same buckets. */
export function histogramDelta(after: Histogram, before: Histogram): Histogram {
  return {
    bounds: after.bounds,
    cumulative: after.cumulative.map(
      (count, index) => count - (before.bounds.length === 0 ? 0 : before.cumulative[index]!),
    ),
    sum: after.sum - before.sum,
  };
}

/** The sum of two histograms of the same buckets; undefined is none yet. */
export function histogramTotal(left: Histogram | undefined, right: Histogram): Histogram {
  if (left === undefined) return right;
  return {
    bounds: right.bounds,
    cumulative: right.cumulative.map((count, index) => count + left.cumulative[index]!),
    sum: left.sum + right.sum,
  };
}

/** How many observations a histogram holds. */
export function observations(histogram: Histogram): number {
  return histogram.cumulative.at(-1) ?? 0;
}

/**
 * The q-quantile by linear interpolation within the bucket holding the rank, as Prometheus's histogram_quantile
 * (promql/quantile.go bucketQuantile): the first bucket starts at 0, a rank in the +Inf bucket gives the highest
 * finite bound. Also returns the bucket, whose width is the figure's resolution.
 */
export function histogramQuantile(q: number, histogram: Histogram): Quantile {
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
export function sampleQuantile(q: number, samples: readonly number[]): number {
  const sorted = [...samples].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
