/**
 * The shipped sync function as the real-cluster scenarios run it: the bundle scripts/build.ts writes, invoked by hand
 * (one sync, as any event but the schedule does) in a fresh process with the environment of kubeconfig mode, the
 * kubeconfig read from a Secrets Manager stand-in and the rules written to dynalite.
 */
import type { SyncReport } from '../../lib/sync/index.ts';
import { invokeShippedHandler } from '../deploy/lambda-run.ts';

/** Where one sync function runs and what it reaches. */
interface SyncFunction {
  /** The unpacked sync bundle (buildFunctions' outdir, then `sync`). */
  readonly taskRoot: string;
  /** The Secrets Manager stand-in's URL (startFakeAws). */
  readonly secretsManagerUrl: string;
  readonly kubeconfigSecretArn: string;
  readonly dynamoEndpoint: string;
  readonly tableName: string;
  readonly clusterId: string;
  /** REPORT_INTERVAL_MINUTES: the migration report on each rule's status. */
  readonly reportIntervalMinutes: number;
}

/** One invocation's report and the lines it printed (Powertools logs and EMF metrics). */
async function invokeSyncFunction(
  target: SyncFunction,
): Promise<{ readonly report: SyncReport; readonly lines: readonly string[] }> {
  const region = /^arn:aws:secretsmanager:([^:]+):/.exec(target.kubeconfigSecretArn)?.[1] ?? 'eu-west-1';
  const invocation = await invokeShippedHandler({
    taskRoot: target.taskRoot,
    handler: 'index.handler',
    environment: {
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: 'AKIDSYNCTEST',
      AWS_SECRET_ACCESS_KEY: 'sync-test-secret',
      AWS_LAMBDA_FUNCTION_NAME: 'podmutation-test-sync',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: target.secretsManagerUrl,
      TZ: ':UTC',
      POWERTOOLS_SERVICE_NAME: 'podmutation-sync',
      POWERTOOLS_METRICS_NAMESPACE: 'podmutation',
      RULES_TABLE: target.tableName,
      CLUSTER_ID: target.clusterId,
      DYNAMODB_ENDPOINT: target.dynamoEndpoint,
      KUBECONFIG_SECRET_ARN: target.kubeconfigSecretArn,
      REPORT_INTERVAL_MINUTES: String(target.reportIntervalMinutes),
      SYNC_INTERVAL_SECONDS: '30',
    },
    event: {},
    functionName: 'podmutation-test-sync',
    memorySize: 512,
    timeoutSeconds: 70,
  });
  return { report: invocation.result as SyncReport, lines: invocation.lines };
}

export { invokeSyncFunction };
export type { SyncFunction };
