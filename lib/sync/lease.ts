/** The sync's lease: the cluster's sync lease taken (waiting a while for its holder), renewed, released, by one HeldLease. */
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

/** Where a held lease reports: the sync's clock, its logger, and the cluster it syncs. */
interface LeaseContext {
  readonly clock: () => number;
  readonly logger: Logger;
  readonly clusterId: string;
}

type Acquired = Extract<SyncLeaseAcquisition, { acquired: true }>;

/** The lease another sync holds: its owner and when it runs out. */
interface HeldElsewhere {
  readonly holder: Extract<SyncLeaseAcquisition, { acquired: false }>['holder'];
}

/** The cluster's sync lease while this sync holds it: taken once, renewed before the publish, released at the end. */
class HeldLease {
  private constructor(
    private readonly options: CheckedLease,
    private readonly context: LeaseContext,
    private lease: HeldSyncLease,
  ) {}

  /**
   * Takes the lease, trying again every pollMs (or when the holder's lease runs out, if sooner) until waitMs has
   * passed; the holder when another sync still holds it. Warns when it took over from a holder whose clock ran ahead.
   */
  static async take(options: CheckedLease, context: LeaseContext): Promise<HeldLease | HeldElsewhere> {
    const deadline = context.clock() + options.waitMs;
    for (;;) {
      const attempt = await options.leases.acquire(options.owner);
      const now = context.clock();
      if (attempt.acquired) {
        warnUntrusted(context, attempt);
        return new HeldLease(options, context, attempt.lease);
      }
      if (now >= deadline) return { holder: attempt.holder };
      const untilExpiry = Date.parse(attempt.holder.expiresAt) - now + 1;
      await options.sleep(Math.max(1, Math.min(options.pollMs, deadline - now, untilExpiry)));
    }
  }

  /** Extends the lease; a StoreError (context.reason `leaseLost`) when another sync took it. */
  async renew(): Promise<void> {
    this.lease = await this.options.leases.renew(this.lease);
  }

  /** Releases the lease; a failure is logged, never thrown: the lease then frees itself when it expires. */
  async release(): Promise<void> {
    const { logger, clusterId } = this.context;
    const held = this.lease;
    try {
      if (!(await this.options.leases.release(held))) {
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
}

/** Warns that the lease was taken over from a holder whose clock ran ahead. */
function warnUntrusted({ logger, clusterId }: LeaseContext, taken: Acquired): void {
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

export { checkedLease, HeldLease };
export type { CheckedLease, HeldElsewhere, SyncLeaseOptions };
