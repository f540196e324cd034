import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { MalformedInputError } from '../errors/index.ts';
import { createPodMutationSource } from '../cluster/index.ts';
import { createSnapshotStore, createSyncLeaseStore, createSyncRecordStore } from '../store/index.ts';
import { DISCARDED_METRICS, jsonLineLogger } from '../observability/index.ts';
import { syncOnce, type SyncReport } from '../sync/index.ts';
import { readAll } from '../values/index.ts';
import { writeLine, type CliStreams } from './io.ts';
import { STORE_TARGET_OPTIONS, resolveStoreTarget, storeTarget, targetClient } from './options/store-target.ts';

// Long enough for the Lambda's own sync (seconds) to finish and release the lease; a crashed holder's lease (120 s) is not waited out.
const DEFAULT_LEASE_WAIT_SECONDS = 60;
const MAX_LEASE_WAIT_SECONDS = 600;

/** `--lease-wait SECONDS`: how long to wait for the sync lease another sync holds, a whole number from 0 to 600. */
function leaseWaitSeconds(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LEASE_WAIT_SECONDS;
  const seconds = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(seconds <= MAX_LEASE_WAIT_SECONDS)) {
    throw new MalformedInputError(`--lease-wait is "${text}"; expected a whole number of seconds from 0 to ${MAX_LEASE_WAIT_SECONDS}`, {
      context: { flag: '--lease-wait' },
    });
  }
  return seconds;
}

/** This process as a lease owner, `cli:<host>:<pid>`, in the printable ASCII the lease store accepts. */
function leaseOwner(): string {
  return `cli:${hostname()}:${process.pid}`.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}

/** Why a skipped sync published nothing, for the operator at the terminal. */
function skipMessage(report: SyncReport, clusterId: string, waitedSeconds: number): string {
  if (report.skipReason === 'leaseHeld') {
    return (
      `not synced: the sync lease of cluster "${clusterId}" is held by ${report.leaseHolder ?? 'another sync'} until ${report.leaseExpiresAt ?? 'its expiry'} ` +
      `(waited ${waitedSeconds} s); run it again after that time, or with a longer --lease-wait`
    );
  }
  return `not published: ${report.error ?? 'a newer list is already published'}`;
}

/**
 * `podmutation sync --once --kubeconfig FILE [--context NAME] [--lease-wait SECONDS] TARGET`: one sync from the
 * kubeconfig's cluster into the table TARGET names (--stage, --table with --cluster-id, or --dynamodb-endpoint; see
 * options/store-target.ts), created first when --dynamodb-endpoint names a local DynamoDB. The sync takes the
 * cluster's sync lease first, waiting up to --lease-wait seconds (default 60) while another sync (the Lambda) holds
 * it. Prints the report as one JSON line; exit 0 when published or unchanged, 1 when the sync failed or was skipped
 * (the lease stayed held, or a newer list is already published), 2 for usage or configuration errors.
 */
export async function syncCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      once: { type: 'boolean' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'lease-wait': { type: 'string' },
      ...STORE_TARGET_OPTIONS,
    },
    allowPositionals: false,
  });
  if (values.once !== true) {
    throw new MalformedInputError(
      'sync needs --once (one sync, then exit); for a continuous sync from a workstation run `podmutation serve --kubeconfig FILE`',
    );
  }
  if (values.kubeconfig === undefined || values.kubeconfig === '') throw new MalformedInputError('sync needs --kubeconfig FILE');
  const source = createPodMutationSource({
    mode: 'kubeconfigFile',
    path: values.kubeconfig,
    ...(values.context === undefined ? {} : { context: values.context }),
  });
  // The lease flag with the store flags, before any network, so that one error names every wrong flag.
  const { waitSeconds } = readAll({ waitSeconds: () => leaseWaitSeconds(values['lease-wait']), target: () => storeTarget(values) }, MalformedInputError);
  // After the kubeconfig, which needs no network: --stage reads the stack's outputs from CloudFormation.
  const target = await resolveStoreTarget(values);
  const client = await targetClient(target);
  try {
    const report = await syncOnce({
      source,
      store: createSnapshotStore({ client, tableName: target.tableName }),
      records: createSyncRecordStore({ client, tableName: target.tableName }),
      lease: { leases: createSyncLeaseStore({ client, tableName: target.tableName }), owner: leaseOwner(), waitMs: waitSeconds * 1000 },
      clusterId: target.clusterId,
      // The report on stdout already says what info would; warnings and errors go to stderr as JSON lines.
      logger: jsonLineLogger(streams.stderr, ['warn', 'error']),
      metrics: DISCARDED_METRICS,
    });
    writeLine(streams.stdout, JSON.stringify(report));
    if (report.outcome === 'skipped') writeLine(streams.stderr, `podmutation sync: ${skipMessage(report, target.clusterId, waitSeconds)}`);
    return report.outcome === 'failed' || report.outcome === 'skipped' ? 1 : 0;
  } finally {
    client.destroy();
  }
}
