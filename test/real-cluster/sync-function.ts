/**
 * The shipped sync function as the real-cluster scenarios run it: the bundle scripts/build.ts writes, invoked by hand
 * (one sync, as any event but the schedule does) in a fresh process with the environment of kubeconfig mode, the
 * kubeconfig read from a Secrets Manager stand-in and the rules written to dynalite.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SyncReport } from '../../lib/sync/index.ts';
import type { FakeAws } from '../cluster/fake-aws.ts';
import { invokeShippedHandler } from '../deploy/lambda-run.ts';
import type { ControlPlane } from './control-plane.ts';
import { applyInfra, kubectlOk, untilAllowed } from './kubectl.ts';

const INFRA = fileURLToPath(new URL('../../infra', import.meta.url));
const SYNC_NAMESPACE = 'podmutation-system';
/** Kubeconfig mode of docs/operations.md: the label selector of its `kubectl apply -k infra/`. */
const KUBECONFIG_MODE = 'podmutation.agent.cloudpilot.ai/access!=eks-access-entry';
/** The ServiceAccount the sync runs as in kubeconfig mode, as the API server names it. */
const SYNC_USER = `system:serviceaccount:${SYNC_NAMESPACE}:podmutation-sync`;
/** Where the scenarios' Secrets Manager stand-in keeps the sync's kubeconfig. */
const KUBECONFIG_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation-kubeconfig-AbCdEf';

/** Where one sync function runs and what it reaches. */
interface SyncFunction {
  /** The unpacked sync bundle (buildFunctions' outdir, then `sync`). */
  readonly taskRoot: string;
  /** The Secrets Manager stand-in's URL (startFakeAws). */
  readonly secretsManagerUrl: string;
  /** Default KUBECONFIG_SECRET_ARN, where setUpKubeconfigMode stores it. */
  readonly kubeconfigSecretArn?: string;
  readonly dynamoEndpoint: string;
  readonly tableName: string;
  /** Default "default". */
  readonly clusterId?: string;
  /** REPORT_INTERVAL_MINUTES: the migration report on each rule's status. */
  readonly reportIntervalMinutes: number;
}

/** One invocation's report and the lines it printed (Powertools logs and EMF metrics). */
async function invokeSyncFunction(
  target: SyncFunction,
): Promise<{ readonly report: SyncReport; readonly lines: readonly string[] }> {
  const kubeconfigSecretArn = target.kubeconfigSecretArn ?? KUBECONFIG_SECRET_ARN;
  const region = /^arn:aws:secretsmanager:([^:]+):/.exec(kubeconfigSecretArn)?.[1] ?? 'eu-west-1';
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
      CLUSTER_ID: target.clusterId ?? 'default',
      DYNAMODB_ENDPOINT: target.dynamoEndpoint,
      KUBECONFIG_SECRET_ARN: kubeconfigSecretArn,
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

/**
 * Kubeconfig mode as docs/operations.md sets it up, the sync's report access included: infra/ and
 * infra/rbac-sync-report.yaml applied with its selector, then, once the ServiceAccount may do each of `allowed`
 * (`kubectl auth can-i` arguments), a kubeconfig with a token of it stored in `aws` at KUBECONFIG_SECRET_ARN.
 */
async function setUpKubeconfigMode(
  plane: ControlPlane,
  aws: FakeAws,
  allowed: readonly (readonly string[])[],
): Promise<void> {
  await applyInfra(plane, KUBECONFIG_MODE);
  await kubectlOk(plane, ['apply', '-f', join(INFRA, 'rbac-sync-report.yaml'), '-l', KUBECONFIG_MODE]);
  for (const args of allowed) await untilAllowed(plane, SYNC_USER, [...args, `--as=${SYNC_USER}`]);
  const token = (await kubectlOk(plane, ['create', 'token', 'podmutation-sync', '-n', SYNC_NAMESPACE])).trim();
  aws.secrets.set(
    KUBECONFIG_SECRET_ARN,
    await readFile(await plane.tokenKubeconfig('podmutation-sync', token), 'utf8'),
  );
}

export { invokeSyncFunction, setUpKubeconfigMode };
export type { SyncFunction };
