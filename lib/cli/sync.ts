import { hostname } from 'node:os';
import { Option, type Command } from 'commander';
import { MalformedInputError } from '../errors/index.ts';
import { DISCARDED_METRICS, jsonLineLogger } from '../observability/index.ts';
import type { SyncReport } from '../sync/index.ts';
import { readAll } from '../json/index.ts';
import { CLUSTER_UID } from '../syntax/index.ts';
import { defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import { writeLine } from './io.ts';
import { kubeconfigOf, kubeconfigOptions, type KubeconfigFlags } from './options/kubeconfig.ts';
import {
  resolveStoreTarget,
  storeTarget,
  storeTargetOptions,
  targetClient,
  TARGET_DEFINITION,
  type StoreFlags,
} from './options/store-target.ts';

interface SyncFlags extends StoreFlags, KubeconfigFlags {
  readonly once?: boolean;
  readonly leaseWait?: string;
  readonly rebindFrom?: string;
}

// Long enough for the Lambda's own sync (seconds) to finish and release the lease; a crashed holder's lease (120 s) is not waited out.
const DEFAULT_LEASE_WAIT_SECONDS = 60;
const MAX_LEASE_WAIT_SECONDS = 600;

/** `--lease-wait SECONDS`: how long to wait for the sync lease another sync holds, a whole number from 0 to 600. */
function leaseWaitSeconds(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LEASE_WAIT_SECONDS;
  const seconds = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(seconds <= MAX_LEASE_WAIT_SECONDS)) {
    throw new MalformedInputError(
      `--lease-wait is "${text}"; expected a whole number of seconds from 0 to ${MAX_LEASE_WAIT_SECONDS}`,
      {
        context: { flag: '--lease-wait' },
      },
    );
  }
  return seconds;
}

/** `--rebind-from UID`: the kube-system uid the cluster id is bound to now, checked for its form before any network. */
function rebindFrom(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!CLUSTER_UID.pattern.test(text)) {
    throw new MalformedInputError(`--rebind-from is "${text}"; expected ${CLUSTER_UID.form}`, {
      context: { flag: '--rebind-from' },
    });
  }
  return text;
}

/** This process as a lease owner, `cli:<host>:<pid>`, in the printable ASCII the lease store accepts. */
function leaseOwner(): string {
  return `cli:${hostname()}:${process.pid}`.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}

/** Why a skipped sync published nothing, for the operator at the terminal. */
function skipMessage(report: SyncReport, clusterId: string, waitedSeconds: number): string {
  if (report.skipReason === 'leaseHeld') {
    return (
      `not synced: the sync lease of cluster "${clusterId}" is held by ${report.leaseHolder} until ${report.leaseExpiresAt} ` +
      `(waited ${waitedSeconds} s); run it again after that time, or with a longer --lease-wait`
    );
  }
  return `not published: ${report.error ?? 'a newer list is already published'}`;
}

/**
 * One sync from the kubeconfig's cluster into the table TARGET names (--stage, --table with --cluster-id, or
 * --dynamodb-endpoint; see options/store-target.ts), created first when --dynamodb-endpoint names a local DynamoDB.
 * The sync takes the cluster's sync lease first, waiting up to --lease-wait seconds while another sync (the Lambda)
 * holds it. Prints the report as one JSON line.
 */
async function sync(values: SyncFlags, { streams, env }: CliContext): Promise<number> {
  if (values.once !== true) {
    throw new MalformedInputError(
      'sync needs --once (one sync, then exit); for a continuous sync from a workstation run `podmutation serve --kubeconfig FILE`',
    );
  }
  const cluster = kubeconfigOf(values, env);
  // Loaded on use: the Kubernetes client and the AWS SDK would slow the start of every other command.
  const [{ createCapacitySource, createPodMutationSource }, { openRulesTable }, { syncOnce }] = await Promise.all([
    import('../cluster/index.ts'),
    import('../store/index.ts'),
    import('../sync/index.ts'),
  ]);
  const source = createPodMutationSource(cluster);
  // The lease flag with the store flags, before any network, so that one error names every wrong flag.
  const { waitSeconds, rebind } = readAll(
    {
      waitSeconds: () => leaseWaitSeconds(values.leaseWait),
      rebind: () => rebindFrom(values.rebindFrom),
      target: () => storeTarget(values),
    },
    MalformedInputError,
  );
  // After the kubeconfig, which needs no network: --stage reads the stack's outputs from CloudFormation.
  const target = await resolveStoreTarget(values);
  const client = await targetClient(target);
  const table = openRulesTable({ client, tableName: target.tableName, clusterId: target.clusterId });
  const owner = leaseOwner();
  try {
    const report = await syncOnce({
      source,
      store: table.snapshots,
      records: table.records,
      lease: {
        leases: table.leases,
        owner,
        waitMs: waitSeconds * 1000,
      },
      binding: { store: table.bindings, owner, ...(rebind === undefined ? {} : { rebindFrom: rebind }) },
      clusterId: target.clusterId,
      // The report on stdout already says what info would; warnings and errors go to stderr as JSON lines.
      logger: jsonLineLogger(streams.stderr, ['warn', 'error']),
      metrics: DISCARDED_METRICS,
      // Published with the rules as the Lambda publishes them; an identity that may not list Nodes publishes none (a warning).
      capacity: createCapacitySource(cluster),
    });
    writeLine(streams.stdout, JSON.stringify(report));
    if (report.outcome === 'skipped')
      writeLine(streams.stderr, `podmutation sync: ${skipMessage(report, target.clusterId, waitSeconds)}`);
    // The error line above is JSON for machines; a refused publish says here, in words, what to do (set the clock right).
    if (report.outcome === 'failed')
      writeLine(streams.stderr, `podmutation sync: not synced: ${report.error ?? 'the sync failed'}`);
    return report.outcome === 'failed' || report.outcome === 'skipped' ? EXIT.findings : EXIT.ok;
  } finally {
    client.destroy();
  }
}

/** `podmutation sync`. */
export function registerSync(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'sync', {
    summary: "sync the cluster's PodMutations into the rules table once, as the sync Lambda does",
    description:
      "One sync of the kubeconfig's cluster into the rules table TARGET names, status written back; the report is printed " +
      "as one JSON line. The snapshot carries the cluster's Nodes and NodePools, which admission judges changed Pods " +
      "against (an identity that may not list them publishes none, with a warning). The sync takes the cluster's sync " +
      'lease first, waiting up to --lease-wait seconds while another ' +
      'sync (the Lambda) holds it. The first publish binds the cluster id to the cluster (the uid of its kube-system ' +
      'namespace); a sync of any other cluster under that id is refused, until --rebind-from names the bound uid. ' +
      TARGET_DEFINITION,
    examples: [
      'podmutation sync --once --context prod --stage prod --region eu-west-1',
      'podmutation sync --once --kubeconfig kind.yaml --dynamodb-endpoint http://127.0.0.1:8000',
      'podmutation sync --once --kubeconfig new-cluster.yaml --stage prod --rebind-from 5b7e8a52-0c4f-4b8e-9d43-3f1e6a2c9b70',
    ],
    exits: {
      0: 'published, or nothing changed',
      1: 'the sync failed (also: the cluster id is bound to another cluster) or was skipped (the lease stayed held, or a newer list is already published)',
      2: 'usage error, or an unreadable kubeconfig or stack',
    },
  });
  const [kubeconfig, kubeContext] = kubeconfigOptions('the cluster to read');
  command
    .option('--once', 'one sync, then exit (required: a continuous sync from a workstation is `serve --kubeconfig`)')
    .addOption(kubeconfig)
    .addOption(kubeContext)
    .addOption(
      new Option(
        '--lease-wait <seconds>',
        `seconds to wait for the sync lease another sync holds (0 to ${MAX_LEASE_WAIT_SECONDS})`,
      ).default(String(DEFAULT_LEASE_WAIT_SECONDS)),
    )
    .option(
      '--rebind-from <uid>',
      "re-bind the cluster id from the cluster it is bound to, named by the uid of its kube-system namespace (the refusal message names it), to the kubeconfig's cluster, then sync",
    );
  for (const option of storeTargetOptions()) command.addOption(option);
  onRun<SyncFlags>(command, (flags) => sync(flags, context));
}
