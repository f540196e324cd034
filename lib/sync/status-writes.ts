/** The status step of a sync: planned status patches sent by a small worker pool within a time budget. */
import type { PodMutationSource, SyncedKind } from '../cluster/index.ts';
import { errorLogFields, PodMutationError } from '../errors/index.ts';
import type { Logger } from '../observability/index.ts';

/** What the status write-back did. */
interface StatusWriteResult {
  readonly patched: number;
  readonly failures: readonly { readonly name: string; readonly error: unknown }[];
  readonly skipped: number;
}

/** How many patches run at once, and the epoch milliseconds after which none starts. */
interface StatusWriteLimits {
  readonly concurrency: number;
  readonly deadlineMs: number;
  readonly clock: () => number;
}

// Failures that would repeat for every other resource: stop patching instead of sending requests bound to fail.
const SYSTEMIC_REASONS: ReadonlySet<unknown> = new Set(['unauthorized', 'forbidden', 'network', 'timeout']);
const LOGGED_STATUS_FAILURES = 10;

/** Patches statuses with bounded concurrency until the deadline; stops early on a failure every patch would share. */
async function writeStatuses(
  source: Pick<PodMutationSource, 'patchStatus'>,
  updates: readonly { readonly name: string; readonly kind?: SyncedKind; readonly status: object }[],
  limits: StatusWriteLimits,
): Promise<StatusWriteResult> {
  const failures: { name: string; error: unknown }[] = [];
  let patched = 0;
  let next = 0;
  let stopped = false;
  const worker = async (): Promise<void> => {
    while (!stopped && next < updates.length && limits.clock() < limits.deadlineMs) {
      const update = updates[next]!;
      next += 1;
      try {
        await (update.kind === undefined
          ? source.patchStatus(update.name, update.status)
          : source.patchStatus(update.name, update.status, update.kind));
        patched += 1;
      } catch (error) {
        failures.push({ name: update.kind === undefined ? update.name : `${update.kind} ${update.name}`, error });
        if (error instanceof PodMutationError && SYSTEMIC_REASONS.has(error.context['reason'])) stopped = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limits.concurrency, updates.length) }, worker));
  return { patched, failures, skipped: updates.length - patched - failures.length };
}

/** Warns when some statuses were not written: the snapshot is published regardless. */
function warnIncomplete(logger: Logger, clusterId: string, writes: StatusWriteResult): void {
  if (writes.failures.length === 0 && writes.skipped === 0) return;
  logger.warn('status write-back incomplete; the snapshot is published and the next sync retries', {
    clusterId,
    statusFailed: writes.failures.length,
    statusSkipped: writes.skipped,
    failures: writes.failures
      .slice(0, LOGGED_STATUS_FAILURES)
      .map(({ name, error }) => ({ name, ...errorLogFields(error) })),
  });
}

export { writeStatuses, warnIncomplete };
