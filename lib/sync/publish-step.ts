/** The publish step of a sync: the lease renewed, the snapshot published, the oddities of the publish logged. */
import { listedInvalidRules } from '../api/index.ts';
import { errorLogFields, StoreError } from '../errors/index.ts';
import type { Logger } from '../observability/index.ts';
import type { PublishOutcome, SnapshotStore } from '../store/index.ts';
import type { HeldLease } from './lease.ts';
import type { BindingChange } from './identity-step.ts';
import type { ListedRules } from './list-step.ts';
import type { SyncStep } from './sync-report.ts';

/** How a publish ended: published (or unchanged), superseded by a newer list, or failed at a step. */
type PublishResult =
  | { readonly kind: 'published'; readonly outcome: PublishOutcome; readonly binding: BindingChange }
  | { readonly kind: 'superseded'; readonly error: StoreError; readonly version?: number }
  | {
      readonly kind: 'failed';
      readonly failedStep: Extract<SyncStep, 'lease' | 'identity' | 'publish'>;
      readonly error: unknown;
    };

/**
 * Renews the lease (when held), confirms the cluster's identity (confirmIdentity: its binding to the cluster id), then
 * publishes the listed content ordered by its list start; nothing is published when either fails.
 */
async function publishListed(
  store: Pick<SnapshotStore, 'publish'>,
  listed: ListedRules,
  held: Pick<HeldLease, 'renew'> | undefined,
  confirmIdentity: () => Promise<BindingChange>,
): Promise<PublishResult> {
  if (held !== undefined) {
    // Renewing proves that no other sync took the lease during the list (its holder id is still ours) and covers the publish.
    try {
      await held.renew();
    } catch (error) {
      return { kind: 'failed', failedStep: 'lease', error };
    }
  }
  let binding: BindingChange;
  try {
    // Last before the publish, under the renewed lease: a re-bind between this check and the pointer switch is the one race left.
    binding = await confirmIdentity();
  } catch (error) {
    return { kind: 'failed', failedStep: 'identity', error };
  }
  const { content, listStartedMs } = listed;
  try {
    const outcome = await store.publish(
      { ...content, invalid: listedInvalidRules(content.invalid) },
      { listStartedAt: listStartedMs },
    );
    return { kind: 'published', outcome, binding };
  } catch (error) {
    if (error instanceof StoreError && error.context['reason'] === 'superseded') {
      const version = error.context['version'];
      return { kind: 'superseded', error, ...(typeof version === 'number' ? { version } : {}) };
    }
    return { kind: 'failed', failedStep: 'publish', error };
  }
}

/** Warns of what a successful publish found: a list start a clock ahead had written, a cleanup that failed. */
function warnPublished(logger: Logger, clusterId: string, outcome: PublishOutcome): void {
  if (outcome.untrustedListStart !== undefined) {
    logger.warn(
      "replaced a snapshot whose list start lay too far ahead of the table's clock; the clock of the sync that published it runs ahead",
      {
        clusterId,
        version: outcome.version,
        untrustedListStartedAt: outcome.untrustedListStart.listStartedAt,
        aheadMs: outcome.untrustedListStart.aheadMs,
      },
    );
  }
  if (outcome.cleanupError !== undefined) {
    logger.warn('published; marking the superseded snapshot for expiry failed, a later publish retries it', {
      clusterId,
      version: outcome.version,
      ...errorLogFields(outcome.cleanupError),
    });
  }
}

export { publishListed, warnPublished };
