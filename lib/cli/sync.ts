import { parseArgs } from 'node:util';
import { MalformedInputError } from '../errors/index.ts';
import { createPodMutationSource } from '../kube/index.ts';
import { createDynamoClient, createSnapshotStore, createSnapshotTable } from '../store/index.ts';
import { syncOnce, type SyncLogFields, type SyncLogger, type SyncMetrics } from '../sync/index.ts';
import { writeLine, type CliStreams } from './io.ts';

const DEFAULT_TABLE = 'podmutation-rules';
const DEFAULT_CLUSTER_ID = 'default';
// The same forms readStoreConfig accepts for RULES_TABLE and CLUSTER_ID, checked here to name the flag.
const TABLE_NAME_PATTERN = /^[A-Za-z0-9_.-]{3,255}$/;
const CLUSTER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d+$/;

// The report on stdout already says what info would; warnings and errors go to stderr as JSON lines.
function stderrLogger(streams: CliStreams): SyncLogger {
  const write = (level: string, message: string, fields: SyncLogFields): void =>
    writeLine(streams.stderr, JSON.stringify({ level, message, ...fields }));
  return {
    info: () => undefined,
    warn: (message, fields) => write('WARN', message, fields),
    error: (message, fields) => write('ERROR', message, fields),
  };
}

const NO_METRICS: SyncMetrics = { addMetric: () => undefined };

function checked(value: string, pattern: RegExp, flag: string, expected: string): string {
  if (!pattern.test(value)) throw new MalformedInputError(`${flag} is "${value}"; expected ${expected}`);
  return value;
}

function checkedEndpoint(value: string): string {
  let protocol = '';
  try {
    protocol = new URL(value).protocol;
  } catch {
    // Reported below with the expected form.
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new MalformedInputError(`--dynamodb-endpoint is "${value}"; expected an http:// or https:// URL`);
  }
  return value;
}

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
      table: { type: 'string' },
      'dynamodb-endpoint': { type: 'string' },
      'cluster-id': { type: 'string' },
      region: { type: 'string' },
    },
    allowPositionals: false,
  });
  if (values.once !== true) {
    throw new MalformedInputError(
      'sync needs --once (one sync, then exit); for a continuous sync from a workstation run `podmutation serve --kubeconfig FILE`',
    );
  }
  if (values.kubeconfig === undefined || values.kubeconfig === '') throw new MalformedInputError('sync needs --kubeconfig FILE');
  const tableName = checked(values.table ?? DEFAULT_TABLE, TABLE_NAME_PATTERN, '--table', 'a DynamoDB table name (3 to 255 letters, digits, "_", "-" or ".")');
  const clusterId = checked(
    values['cluster-id'] ?? DEFAULT_CLUSTER_ID,
    CLUSTER_ID_PATTERN,
    '--cluster-id',
    '1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit',
  );
  const endpoint = values['dynamodb-endpoint'] === undefined ? undefined : checkedEndpoint(values['dynamodb-endpoint']);
  const region = values.region === undefined ? undefined : checked(values.region, REGION_PATTERN, '--region', 'an AWS region such as us-east-1');

  const source = createPodMutationSource({
    mode: 'kubeconfigFile',
    path: values.kubeconfig,
    ...(values.context === undefined ? {} : { context: values.context }),
  });
  const client = createDynamoClient({
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(region === undefined ? {} : { region }),
  });
  try {
    // A local DynamoDB starts empty; in AWS the table belongs to the deployed stack and is never created here.
    if (endpoint !== undefined) await createSnapshotTable(client, tableName);
    const report = await syncOnce({
      source,
      store: createSnapshotStore({ client, tableName }),
      clusterId,
      logger: stderrLogger(streams),
      metrics: NO_METRICS,
    });
    writeLine(streams.stdout, JSON.stringify(report));
    return report.outcome === 'failed' ? 1 : 0;
  } finally {
    client.destroy();
  }
}
