/**
 * Clocks of the rules table's writers: how far a writer's clock may run ahead of the table's before its writes are
 * refused or replaced, and the table's own clock as DynamoDB reports it (the Date header of a response).
 */
import type { GetItemCommand } from '@aws-sdk/client-dynamodb';

/**
 * How far a list start (or a lease expiry, beyond the lease's own length) may lie ahead of the table's clock, or of
 * the writer's: 120 s. Above the sync lease's margin (at least 50 s: the 120 s lease less the Lambda's 70 s timeout),
 * so that no skew the lease tolerates is refused; no longer than the lease itself, so that a writer whose clock runs
 * ahead holds back the others no longer than a crashed lease holder does (120 s), and well inside RulesStaleAlarm's
 * 5-minute window. NTP-synced clocks, the Lambda's among them, agree to well under a second.
 */
const MAX_CLOCK_SKEW_MS = 120_000;

/**
 * Attaches to a command a reader of the response's Date header (RFC 9110 §6.6.1: the time the origin server made the
 * response, to the second), the one server time DynamoDB's responses carry. The getter answers undefined before the
 * response, or when it has no readable Date.
 */
function withTableTime(command: GetItemCommand): () => number | undefined {
  let tableTime: number | undefined;
  command.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      tableTime = dateHeaderOf(result.response);
      return result;
    },
    { step: 'deserialize', name: 'podmutationTableTime' },
  );
  return () => tableTime;
}

function dateHeaderOf(response: unknown): number | undefined {
  const headers =
    typeof response === 'object' && response !== null
      ? (response as { readonly headers?: unknown }).headers
      : undefined;
  if (typeof headers !== 'object' || headers === null) return undefined;
  const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'date');
  const time = typeof entry?.[1] === 'string' ? Date.parse(entry[1]) : Number.NaN;
  return Number.isNaN(time) ? undefined : time;
}

/** A span of time for people: seconds up to three minutes, minutes up to three hours, then hours. */
function spanText(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1000);
  if (seconds <= 180) return `${seconds} s`;
  if (seconds <= 3 * 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export { MAX_CLOCK_SKEW_MS, withTableTime, spanText };
