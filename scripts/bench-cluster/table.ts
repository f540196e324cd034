/** The cluster bench's printed tables: every mechanism's figures and their ratios to the floor and to MAP. */
import type { Figures } from './measured.ts';

const ms = (value: number): string => `${value.toFixed(2)} ms`;
const ratio = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}x` : '—');
const bound = (seconds: number): string => (seconds === Infinity ? '+Inf' : `${(seconds * 1000).toFixed(0)} ms`);

function row(cells: readonly [string, ...string[]], widths: readonly number[]): string {
  return cells.map((cell, index) => (index === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[index]!))).join(' ');
}

/** The creators' view: latency of each Pod's creation, over the floor and against MAP. */
export function creationTable(all: readonly Figures[], floor: Figures, map: Figures | undefined): string[] {
  const widths = [34, 10, 10, 11, 8, 8, 11, 9, 7, 7, 9];
  const over = (figures: Figures): number => figures.createP50 - floor.createP50;
  const lines = [
    row(
      [
        'mechanism',
        'create p50',
        'create p99',
        'p50 - floor',
        '/floor',
        '/MAP',
        '(-floor)/MAP',
        'p99/floor',
        'Pods/s',
        'failed',
        'mutated',
      ],
      widths,
    ),
  ];
  for (const figures of all) {
    const { entry } = figures;
    lines.push(
      row(
        [
          figures.entry.mechanism.label,
          ms(figures.createP50),
          ms(figures.createP99),
          ms(over(figures)),
          ratio(figures.createP50 / floor.createP50),
          map === undefined ? '—' : ratio(figures.createP50 / map.createP50),
          // A MAP within 0.1 ms of the floor leaves no overhead to divide by.
          map === undefined || figures === floor || over(map) < 0.1 ? '—' : ratio(over(figures) / over(map)),
          ratio(figures.createP99 / floor.createP99),
          figures.podsPerSecond.toFixed(0),
          String(entry.failed),
          entry.mechanism.mutates ? `${entry.mutated}/${entry.clientMs.length}` : `${entry.mutated}`,
        ],
        widths,
      ),
    );
  }
  return lines;
}

/** Each mechanism's added latency by the creators' mean, finer than a p50 when the differences are small. */
export function overheadLines(all: readonly Figures[], floor: Figures, map: Figures | undefined): string[] {
  const added = (figures: Figures): number => figures.createMean - floor.createMean;
  return all
    .filter((figures) => figures !== floor)
    .map(
      (figures) =>
        `  ${figures.entry.mechanism.label}: ${ms(added(figures))} over the floor's mean of ${ms(floor.createMean)}` +
        (map === undefined || figures === map ? '' : `, ${ratio(added(figures) / added(map))} MAP's ${ms(added(map))}`),
    );
}

/** The API server's view: its mutating admission phase, and each webhook's own histogram. */
export function apiServerTable(all: readonly Figures[], floor: Figures): string[] {
  const widths = [34, 11, 8, 7, 10, 10, 10];
  const lines = [row(['mechanism', 'admit mean', '/floor', 'calls', 'hook p50', 'hook p99', 'hook mean'], widths)];
  for (const figures of all) {
    const hook = figures.webhook;
    lines.push(
      row(
        [
          figures.entry.mechanism.label,
          ms(figures.admitMeanMs),
          ratio(figures.admitMeanMs / floor.admitMeanMs),
          hook === undefined ? '—' : String(hook.calls),
          hook === undefined ? '—' : ms(hook.p50.value * 1000),
          hook === undefined ? '—' : ms(hook.p99.value * 1000),
          hook === undefined ? '—' : ms(hook.meanMs),
        ],
        widths,
      ),
    );
  }
  return lines;
}

/** CPU per Pod of each process, so that where a mechanism's time goes shows beside its latency. */
export function cpuTable(all: readonly Figures[]): string[] {
  const names = ['kube-apiserver', 'etcd', 'mechanism', 'creators'];
  const widths = [34, 15, 8, 10, 9, 8];
  const lines = [row(['CPU ms per Pod', ...names, 'total'], widths)];
  for (const figures of all) {
    const cells = names.map((name) => figures.cpuPerPod.get(name));
    const total = cells.reduce<number>((sum, value) => sum + (value ?? 0), 0);
    lines.push(
      row(
        [
          figures.entry.mechanism.label,
          ...cells.map((value) => (value === undefined ? '—' : value.toFixed(2))),
          total.toFixed(2),
        ],
        widths,
      ),
    );
  }
  return lines;
}

/** Which bucket each webhook quantile lies in: a histogram quantile is only known within its bucket. */
export function resolutionLines(all: readonly Figures[]): string[] {
  return all.flatMap((figures) =>
    figures.webhook === undefined
      ? []
      : (['p50', 'p99'] as const).map((name) => {
          const quantile = figures.webhook![name];
          return `  ${figures.entry.mechanism.label} ${name} lies in (${bound(quantile.lower)}, ${bound(quantile.upper)}]`;
        }),
  );
}
