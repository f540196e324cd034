/** The rule snapshots of one cluster: publish as the next version, read the current one (RULES_TABLE_LAYOUT). */
import { randomBytes } from 'node:crypto';
import type { RuleSnapshot } from '../api/index.ts';
import { MalformedInputError, messageOf, StoreError } from '../errors/index.ts';
import { MAX_CLOCK_SKEW_MS } from './clock.ts';
import {
  decodedContentHash,
  decodeContent,
  serializeContent,
  type SerializedContent,
  type SnapshotContent,
} from './codec.ts';
import { checkedClusterId, isoTime } from './items.ts';
import { MAX_PARTS, MAX_VERSION } from './layout.ts';
import {
  expireParts,
  expireSuperseded,
  readParts,
  unusable,
  writeParts,
  type SnapshotPointer,
  type SnapshotTable,
} from './snapshot-parts.ts';
import {
  confirmUnchanged,
  isNewer,
  readCurrent,
  refuseAhead,
  superseded,
  switchPointer,
  untrustedStart,
  type UntrustedListStart,
} from './snapshot-pointer.ts';

/** How a publish is ordered against the current snapshot. */
interface PublishOptions {
  /**
   * Epoch milliseconds when the list behind the content started, by the lister's clock. A publish of other content
   * whose list started before the current snapshot's is refused (StoreError, context.reason `superseded`); one of the
   * same content moves the current snapshot's list start forward. Without it the publish is ordered by version alone.
   * A list start more than MAX_CLOCK_SKEW_MS (120 s) ahead of the table's clock, or the publisher's, is refused
   * (context.reason `clockAhead`); a current list start that far ahead is not ordered by, and is replaced.
   */
  readonly listStartedAt?: number;
}

/** Result of `publish`: the current version and hash, and whether this call made them current. */
interface PublishOutcome {
  readonly published: boolean;
  readonly version: number;
  readonly contentHash: string;
  /** Parts of superseded snapshots newly given a TTL (0 when unchanged). */
  readonly supersededParts: number;
  /** Set when marking superseded parts failed; the publish itself succeeded and those parts stay until a later sweep. */
  readonly cleanupError?: StoreError;
  /** Set when the pointer this publish replaced, or confirmed, carried a list start a clock running ahead had written. */
  readonly untrustedListStart?: UntrustedListStart;
}

/** The rule snapshots of one cluster in one table. */
interface SnapshotStore {
  /** Publishes content as the next version unless its hash equals the current one; atomic for readers. */
  publish(content: SnapshotContent, options?: PublishOptions): Promise<PublishOutcome>;
  /** The current pointer in exactly one eventually consistent GetItem; undefined when nothing was published. */
  readPointer(): Promise<SnapshotPointer | undefined>;
  /** Reads and verifies the snapshot a pointer names; any missing, extra or corrupted part is a StoreError. */
  readSnapshot(pointer: SnapshotPointer): Promise<RuleSnapshot>;
  /** readPointer then readSnapshot; undefined when nothing was published. */
  read(): Promise<RuleSnapshot | undefined>;
}

function checkedListStart(value: number | undefined): number | undefined {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    throw new MalformedInputError(`listStartedAt is ${value}; expected epoch milliseconds`, {
      context: { field: 'listStartedAt' },
    });
  }
  return value;
}

/** Publishes content as the next version; see PublishOptions for how it is ordered. */
async function publish(
  table: SnapshotTable,
  content: SnapshotContent,
  options: PublishOptions = {},
): Promise<PublishOutcome> {
  const { tableName, clusterId } = table;
  checkedClusterId(clusterId);
  isoTime(content.syncedAt, 'syncedAt');
  const listStartedAt = checkedListStart(options.listStartedAt);
  const serialized = serializeContent(content);
  const { contentHash } = serialized;
  // Confirming unchanged content can race another publisher; the pointer is read again once, then the race is lost.
  for (let attempt = 1; ; attempt += 1) {
    const { pointer: current, tableTime } = await readCurrent(table, { consistent: true });
    if (listStartedAt !== undefined) refuseAhead(table, listStartedAt, tableTime);
    const now = tableTime ?? table.clock();
    const trustedUntil = now + MAX_CLOCK_SKEW_MS;
    const untrusted = untrustedStart(current, listStartedAt, now, trustedUntil);
    const replaced = untrusted === undefined ? {} : { untrustedListStart: untrusted };
    if (current?.contentHash === contentHash) {
      if (await confirmUnchanged(table, current, listStartedAt, trustedUntil)) {
        return { published: false, version: current.version, contentHash, supersededParts: 0, ...replaced };
      }
      if (attempt === 2) {
        throw new StoreError(
          `another publisher won: the pointer of cluster "${clusterId}" in table "${tableName}" moved while this publish confirmed it`,
          { context: { tableName, clusterId, version: current.version } },
        );
      }
      continue;
    }
    if (listStartedAt !== undefined && isNewer(current, listStartedAt, trustedUntil))
      throw superseded(table, { current, listStartedAt, tableTime });
    return { ...(await publishNew(table, serialized, { current, listStartedAt, trustedUntil })), ...replaced };
  }
}

/** The parts of serialized content, within the part limit. */
function encodeParts(table: SnapshotTable, serialized: SerializedContent): readonly Uint8Array[] {
  const { clusterId } = table;
  let parts: readonly Uint8Array[];
  try {
    parts = serialized.encode(table.partBytes);
  } catch (error) {
    throw new StoreError(`snapshot of cluster "${clusterId}" cannot be stored: ${messageOf(error)}`, {
      cause: error,
      context: { clusterId },
    });
  }
  if (parts.length > MAX_PARTS) {
    throw new StoreError(
      `snapshot of cluster "${clusterId}" needs ${parts.length} parts, above the limit of ${MAX_PARTS}`,
    );
  }
  return parts;
}

/** What a publish builds on: the current pointer (none yet), its own list's start, and how far the table's clock is trusted. */
interface PublishBasis {
  readonly current: SnapshotPointer | undefined;
  readonly listStartedAt: number | undefined;
  readonly trustedUntil: number;
}

/** Writes new content's parts, switches the pointer to them, then expires the superseded version's parts. */
async function publishNew(
  table: SnapshotTable,
  serialized: SerializedContent,
  { current, listStartedAt, trustedUntil }: PublishBasis,
): Promise<PublishOutcome> {
  const { clusterId } = table;
  const { contentHash } = serialized;
  const version = (current?.version ?? 0) + 1;
  if (version > MAX_VERSION)
    throw new StoreError(`cluster "${clusterId}" has reached the last snapshot version ${MAX_VERSION}`);
  const parts = encodeParts(table, serialized);
  const pointer: SnapshotPointer = {
    version,
    publishId: randomBytes(8).toString('hex'),
    partCount: parts.length,
    contentHash,
    ...(listStartedAt === undefined ? {} : { listStartedAt }),
  };
  const keys = await writeParts(table, pointer, parts);
  try {
    await switchPointer(table, pointer, trustedUntil);
  } catch (error) {
    // The losing parts were never visible to readers; let them expire rather than linger.
    await expireParts(table, keys).catch(() => undefined);
    throw error;
  }
  if (current === undefined) return { published: true, version, contentHash, supersededParts: 0 };
  try {
    const supersededParts = await expireSuperseded(table, current.version);
    return { published: true, version, contentHash, supersededParts };
  } catch (error) {
    const cleanupError =
      error instanceof StoreError ? error : new StoreError(messageOf(error), { cause: error, context: { clusterId } });
    return { published: true, version, contentHash, supersededParts: 0, cleanupError };
  }
}

/** The current pointer from one eventually consistent read. */
async function readPointer(table: SnapshotTable): Promise<SnapshotPointer | undefined> {
  checkedClusterId(table.clusterId);
  return (await readCurrent(table, { consistent: false })).pointer;
}

/** The snapshot a pointer names, its parts verified and its content hashed again. */
async function readSnapshot(table: SnapshotTable, pointer: SnapshotPointer): Promise<RuleSnapshot> {
  checkedClusterId(table.clusterId);
  const decoded = decodeContent(await readParts(table, pointer));
  if ('problem' in decoded) throw unusable(table, pointer.version, decoded.problem, decoded.cause);
  const actualHash = decodedContentHash(decoded);
  if (actualHash !== pointer.contentHash) {
    throw unusable(
      table,
      pointer.version,
      `content hashes to ${actualHash}, but the pointer says ${pointer.contentHash}`,
    );
  }
  const { rules, invalid, resourceVersion, syncedAt, capacity, placements } = decoded.content;
  return {
    rules,
    invalid,
    resourceVersion,
    syncedAt,
    ...(capacity === undefined ? {} : { capacity }),
    ...(placements === undefined ? {} : { placements }),
    contentHash: pointer.contentHash,
    version: pointer.version,
  };
}

/** The snapshot store bound to one cluster's table. */
function createSnapshotStore(table: SnapshotTable): SnapshotStore {
  return {
    publish: (content, options) => publish(table, content, options),
    readPointer: () => readPointer(table),
    readSnapshot: (pointer) => readSnapshot(table, pointer),
    read: async () => {
      const pointer = await readPointer(table);
      return pointer === undefined ? undefined : readSnapshot(table, pointer);
    },
  };
}

export { createSnapshotStore };
export type { SnapshotContent, PublishOutcome, SnapshotStore };
