import { parseArgs } from 'node:util';
import { MalformedInputError } from '../errors/index.ts';
import { createPodMutationSource } from '../cluster/index.ts';
import { createSnapshotStore, createSyncRecordStore } from '../store/index.ts';
import { DISCARDED_METRICS, jsonLineLogger } from '../observability/index.ts';
import { syncOnce } from '../sync/index.ts';
import { writeLine, type CliStreams } from './io.ts';
import { STORE_TARGET_OPTIONS, storeTarget, targetClient } from './options/store-target.ts';



/**
 * `podmutation sync --once --kubeconfig FILE [--context NAME] [--table T] [--dynamodb-endpoint URL] [--cluster-id ID]
 * [--region R]`: one sync from the kubeconfig's cluster into the table (default podmutation-rules, cluster id
 * default), created first when --dynamodb-endpoint names a local DynamoDB. Prints the report as one JSON line;
 * exit 0 when published or unchanged, 1 when the sync failed, 2 for usage or configuration errors.
 */
export async function syncCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      once: { type: 'boolean' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
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
  const target = storeTarget(values);

  const source = createPodMutationSource({
    mode: 'kubeconfigFile',
    path: values.kubeconfig,
    ...(values.context === undefined ? {} : { context: values.context }),
  });
  const client = await targetClient(target);
  try {
    const report = await syncOnce({
      source,
      store: createSnapshotStore({ client, tableName: target.tableName }),
      records: createSyncRecordStore({ client, tableName: target.tableName }),
      clusterId: target.clusterId,
      // The report on stdout already says what info would; warnings and errors go to stderr as JSON lines.
      logger: jsonLineLogger(streams.stderr, ['warn', 'error']),
      metrics: DISCARDED_METRICS,
    });
    writeLine(streams.stdout, JSON.stringify(report));
    return report.outcome === 'failed' ? 1 : 0;
  } finally {
    client.destroy();
  }
}
