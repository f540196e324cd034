/**
 * The one logging and metrics interface of the product: what the admission handler and the sync need, satisfied by
 * Powertools' Logger and Metrics in the functions, by JSON lines on a stream in the CLI, and by recorders in tests.
 */
import type { Writable } from 'node:stream';

/** Structured log fields; never a token, a raw request path or a whole Pod or resource. */
type LogFields = Readonly<Record<string, unknown>>;

/** A structured logger; satisfied by @aws-lambda-powertools/logger's Logger. */
interface Logger {
  info(message: string, fields: LogFields): void;
  warn(message: string, fields: LogFields): void;
  error(message: string, fields: LogFields): void;
}

/** The CloudWatch units the product emits. */
type MetricUnit = 'Count' | 'Seconds' | 'Milliseconds';

/** Metrics; satisfied by @aws-lambda-powertools/metrics' Metrics (flushed as EMF by its middleware). */
interface Metrics {
  addMetric(name: string, unit: MetricUnit, value: number): unknown;
}

/** A logger that writes nothing. */
const DISCARDED_LOGGER: Logger = Object.freeze({
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});

/** Metrics that go nowhere: local runs have no CloudWatch. */
const DISCARDED_METRICS: Metrics = Object.freeze({ addMetric: () => undefined });

/**
 * One JSON object per line on a stream, in the shape of the Lambda's Powertools log lines (level, message,
 * timestamp, fields). `levels` limits what is written: the CLI's sync prints its report and logs only problems.
 */
function jsonLineLogger(
  stream: Writable,
  levels: readonly ('info' | 'warn' | 'error')[] = ['info', 'warn', 'error'],
): Logger {
  const write = (level: 'info' | 'warn' | 'error') => (message: string, fields: LogFields) => {
    if (levels.includes(level))
      stream.write(
        `${JSON.stringify({ level: level.toUpperCase(), message, timestamp: new Date().toISOString(), ...fields })}\n`,
      );
  };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

export { DISCARDED_LOGGER, DISCARDED_METRICS, jsonLineLogger };
export type { LogFields, Logger, Metrics };
