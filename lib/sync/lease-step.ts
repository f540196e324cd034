/** The lease step of a sync: take the cluster's sync lease (waiting a while for its holder), renew it, release it. */
import { setTimeout as delay } from 'node:timers/promises';
import { integerOption } from '../config/index.ts';
import { ConfigurationError, errorLogFields } from '../errors/index.ts';
import type { Logger } from '../observability/index.ts';
import type { HeldSyncLease, SyncLeaseAcquisition, SyncLeaseStore } from '../store/index.ts';

/** The sync lease a sync holds from before its list until after its status writes: one sync at a time per cluster. */
interface SyncLeaseOptions {
  readonly leases: Pick<SyncLeaseStore, 'acquire' | 'renew' | 'release'>;
  /** Who this sync is, for people: `lambda:<request id>`, `cli:<host>:<pid>`. */
  readonly owner: string;
  /** How long to wait for a lease another sync holds, in milliseconds (default 0: skip at once). */
  readonly waitMs?: number;
  /** Time between attempts while waiting (default 1 000 ms). */
  readonly pollMs?: number;
  /** Default: a timer. */
  readonly sleep?: (milliseconds: number) => Promise<void>;
}

/** Lease options with every default filled in and checked. */
type CheckedLease = SyncLeaseOptions & Required<Pick<SyncLeaseOptions, 'waitMs' | 'pollMs' | 'sleep'>>;

const DEFAULT_LEASE_POLL_MS = 1_000;

/** The lease options with their defaults; a ConfigurationError for one out of range. */
function checkedLease(lease: SyncLeaseOptions): CheckedLease {
  const waitMs = lease.waitMs ?? 0;
  if (!Number.isInteger(waitMs) || waitMs < 0)
    throw new ConfigurationError(`sync option lease.waitMs is ${waitMs}; expected a whole number of milliseconds`);
  return {
    ...lease,
    waitMs,
    pollMs: integerOption(lease.pollMs, 'sync option lease.pollMs', { fallback: DEFAULT_LEASE_POLL_MS, minimum: 1 }),
    sleep: lease.sleep ?? ((milliseconds: number) => delay(milliseconds)),
  };
}

/** Takes the lease, trying again every pollMs (or when the holder's lease runs out, if sooner) until waitMs has passed. */
async function takeLease(lease: CheckedLease, clock: () => number): Promise<SyncLeaseAcquisition> {
  const deadline = clock() + lease.waitMs;
  for (;;) {
    const attempt = await lease.leases.acquire(lease.owner);
    const now = clock();
    if (attempt.acquired || now >= deadline) return attempt;
    const untilExpiry = Date.parse(attempt.holder.expiresAt) - now + 1;
    await lease.sleep(Math.max(1, Math.min(lease.pollMs, deadline - now, untilExpiry)));
  }
}

/** Warns that the lease was taken over from a holder whose clock ran ahead. */
function warnUntrusted(
  logger: Logger,
  clusterId: string,
  taken: Extract<SyncLeaseAcquisition, { acquired: true }>,
): void {
  if (taken.untrusted === undefined) return;
  logger.warn(
    'took over a sync lease whose expiry lay too far ahead to honour; the clock of the sync that took it runs ahead',
    {
      clusterId,
      leaseHolder: taken.untrusted.owner,
      leaseExpiresAt: taken.untrusted.expiresAt,
      aheadMs: taken.untrusted.aheadMs,
    },
  );
}

/** Releases the lease; a failure is logged, never thrown: the lease then frees itself when it expires. */
async function releaseLease(
  logger: Logger,
  clusterId: string,
  lease: SyncLeaseOptions,
  held: HeldSyncLease,
): Promise<void> {
  try {
    if (!(await lease.leases.release(held))) {
      logger.warn('the sync lease was taken over before this sync released it; the sync outlasted its lease', {
        clusterId,
        owner: held.owner,
      });
    }
  } catch (error) {
    logger.warn('releasing the sync lease failed; it frees itself when it expires', {
      clusterId,
      owner: held.owner,
      leaseExpiresAt: held.expiresAt,
      ...errorLogFields(error),
    });
  }
}

export { checkedLease, takeLease, warnUntrusted, releaseLease };
export type { CheckedLease, SyncLeaseOptions };
