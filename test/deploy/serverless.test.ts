/**
 * The deployment: a copy of the project packaged by the real osls CLI (which builds the bundles first), offline and
 * without AWS credentials, for EKS mode, for kubeconfig mode and for a sync function in a VPC; the CloudFormation
 * template asserted; the shipped artifacts unpacked and run with the environment the template gives them, their AWS
 * calls recorded and compared with their roles.
 */
import { CreateTableCommand, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { checkedToken, readAdmissionConfig } from '../../lib/endpoint/index.ts';
import { STAMP_ANNOTATION } from '../../lib/engine/index.ts';
import { checkedStampKey, keyedStamps } from '../../lib/stamp/index.ts';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import { createDynamoClient } from '../../lib/store/index.ts';
import { readSyncConfig } from '../../lib/sync/index.ts';
import { isValidEksToken } from '../cluster/eks-token-check.ts';
import { kubeconfigFor, startFakeApiServer, type FakeApiServer } from '../cluster/fake-api-server.ts';
import { startFakeAws, type FakeAws } from '../cluster/fake-aws.ts';
import { contentOf, placementsOf, ruleAdding, snapshotsOf } from '../store/support.ts';
import { admissionReview, pod } from '../support/builders.ts';
import { decodePatch, parseAnswer } from '../support/reviews.ts';
import {
  embeddedMetrics,
  invokeShippedHandler,
  startRecordingRelay,
  type AwsCall,
  type Invocation,
  type RecordingRelay,
} from './lambda-run.ts';
import {
  ROOT,
  REGION,
  createServiceFolder,
  extractZip,
  filesUnder,
  packageArgs,
  packageService,
  packageServiceWithOutput,
  readZip,
  runOsls,
  type CliResult,
  type ZipEntry,
} from './package.ts';
import {
  alarmExpression,
  alarmMetrics,
  effectiveTemplate,
  functionLogGroup,
  functionRole,
  logStreamsArn,
  renderExpression,
  resource,
  resourcesOfType,
  roleGrants,
  roleStatements,
  type AlarmMetric,
  type PolicyDocument,
  type Template,
} from './template.ts';
import {
  ALARM_TOPIC_ARN,
  CLUSTER_NAME,
  EKS_PARAMS,
  KUBECONFIG_PARAMS,
  KUBECONFIG_SECRET_ARN,
  SECURITY_GROUP_IDS,
  SUBNET_IDS,
  TUNED_PARAMS,
  VPC_PARAMS,
} from './parameter-sets.ts';
import { EXPIRES_AT_ATTRIBUTE } from '../../lib/store/layout.ts';

const FUNCTIONS = { admission: 'AdmissionLambdaFunction', sync: 'SyncLambdaFunction' } as const;
// Stand-ins for what CloudFormation creates: the physical secret ARN the admission function is given.
const WEBHOOK_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:WebhookTokenSecret-AbCdEf';
const STAMP_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:StampKeySecret-GhIjKl';
const STAMP_KEY = 'StampKeyOfTheDeployTest0123456789abcdefghijklmnopqrstuvwxyzABCD';
const WEBHOOK_TOKEN = 'Zk3q9XvT0bLm7RcWp2YsN8dHa4JeU6gQ1iKoF5tVzBxC0nMw';
// The credentials Lambda puts in the environment; the EKS token the sync makes is signed with them.
const LAMBDA_CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'AKIDDEPLOYTEST',
  AWS_SECRET_ACCESS_KEY: 'deploy-test-secret',
  AWS_SESSION_TOKEN: 'deploy-test-session',
};
const EKS_CLUSTER_ARN = `arn:\${AWS::Partition}:eks:\${AWS::Region}:\${AWS::AccountId}:cluster/${CLUSTER_NAME}`;
const EC2_ARN = 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}';
const ALARMS = [
  'AdmissionErrorsAlarm',
  'Admission5xxAlarm',
  'AdmissionThrottlesAlarm',
  'AdmissionSlowAlarm',
  'LambdaConcurrencyAlarm',
  'DenialsSpikeAlarm',
  'TokenRefreshFailuresAlarm',
  'SyncFailuresAlarm',
  'RulesStaleAlarm',
  'UnschedulableRulesAlarm',
];
// Alarms on a limit fire at this share of it (serverless/plugin.mjs NEAR_LIMIT).
const NEAR_LIMIT = 0.8;
// What the Lambda service itself does with the execution role, not the code: write the function's log streams.
const LOG_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const DYNAMODB_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'];

/** serverless.yml as written (CloudFormation tags left unresolved), for "as configured" comparisons. */
interface ServerlessConfig {
  readonly params: { readonly default: Readonly<Record<string, unknown>> };
  readonly functions: Readonly<Record<'admission' | 'sync', { readonly memorySize: number; readonly timeout: number }>>;
}

/** The properties of an AWS::Lambda::Function these tests read. */
interface FunctionProperties {
  readonly Handler: string;
  readonly FunctionName: string;
  readonly MemorySize: number;
  readonly Timeout: number;
  /** Variable values are literals or expressions (see renderExpression). */
  readonly Environment?: { readonly Variables?: Readonly<Record<string, unknown>> };
  readonly [property: string]: unknown;
}

/** The key schema and billing of an AWS::DynamoDB::Table, as CreateTable takes them. */
type TableProperties = Pick<CreateTableCommandInput, 'AttributeDefinitions' | 'KeySchema' | 'BillingMode'>;

/** A dashboard body once substituted: each widget's metric rows. */
interface DashboardBody {
  readonly widgets: readonly (
    | { readonly type: 'metric'; readonly properties: { readonly metrics: readonly MetricRow[] } }
    | { readonly type: 'log'; readonly properties: { readonly title: string; readonly query: string } }
  )[];
}

/** The options that end a dashboard metric row, or make up an expression row. */
interface MetricRowOptions {
  readonly expression?: string;
  readonly [option: string]: unknown;
}

/** A dashboard metric row: `[namespace, name, dimension, value, ..., options?]`, or `[options]` for an expression. */
type NamedMetricRow = readonly [string, string, ...(string | MetricRowOptions)[]];
type ExpressionMetricRow = readonly [MetricRowOptions];
type MetricRow = NamedMetricRow | ExpressionMetricRow;

function isExpressionRow(row: MetricRow): row is ExpressionMetricRow {
  return typeof row[0] === 'object';
}

function isNamedRow(row: MetricRow): row is NamedMetricRow {
  return typeof row[0] === 'string';
}

/** One shipped function run against the stand-ins, and the AWS calls it made. */
interface FunctionRun {
  readonly invocation: Invocation;
  readonly calls: readonly AwsCall[];
  /** The recorded resource names mapped to the template's rendered ARNs. */
  readonly arns: Readonly<Record<string, string>>;
}

/** A setup step's outcome, kept so that one failing run fails only the tests that need it. */
type Outcome<T> = { readonly value: T } | { readonly error: unknown };

let scratch: string;
let config: ServerlessConfig;
let serviceFolder: string;
let hadDist: boolean;
let eksTemplate: Template;
let kubeconfigTemplate: Template;
let vpcTemplate: Template;
/** The EKS-mode template as osls wrote it, before conditions are evaluated. */
let eksPackaged: Template;
/** What osls printed while it packaged the EKS-mode template (its warnings). */
let eksOutput: string;
let artifacts: Record<'eks' | 'kubeconfig', Record<'admission' | 'sync', ZipEntry[]>>;
let withoutClusterName: CliResult;
let withoutSecurityGroups: CliResult;
let typoEnforcement: CliResult;
/** Every optional parameter of the functions set: audit, a migration report, provisioned concurrency, a raised quota. */
let tunedTemplate: Template;
let localStage: CliResult;
let dynamo: EmbeddedDynamo;
let aws: FakeAws;
let apiServer: FakeApiServer;
let relay: RecordingRelay;
let runs: Record<'admission' | 'eksSync' | 'kubeconfigSync', Outcome<FunctionRun>>;

async function settle<T>(work: Promise<T>): Promise<Outcome<T>> {
  try {
    return { value: await work };
  } catch (error) {
    return { error };
  }
}

function ran(name: keyof typeof runs): FunctionRun {
  const outcome = runs[name];
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

async function readArtifacts(packageFolder: string): Promise<Record<'admission' | 'sync', ZipEntry[]>> {
  return {
    admission: readZip(await readFile(join(packageFolder, 'admission.zip'))),
    sync: readZip(await readFile(join(packageFolder, 'sync.zip'))),
  };
}

function properties(template: Template, id: string): Readonly<Record<string, unknown>> {
  return resource(template, id).Properties;
}

function functionProperties(template: Template, functionId: string): FunctionProperties {
  return properties(template, functionId) as FunctionProperties;
}

/** A function's Environment.Variables as the template writes them; throws when it sets none. */
function functionVariables(template: Template, functionId: string): Readonly<Record<string, unknown>> {
  const variables = functionProperties(template, functionId).Environment?.Variables;
  if (variables === undefined) throw new Error(`${functionId} sets no environment variables`);
  return variables;
}

/** A variable the template sets to a literal string for a function. */
function literalVariable(template: Template, functionId: string, name: string): string {
  const value = functionVariables(template, functionId)[name];
  if (typeof value !== 'string')
    throw new Error(`${functionId} sets ${name} to ${JSON.stringify(value)}, not a literal string`);
  return value;
}

/** A function's environment as Lambda would set it: Refs replaced by the physical ids given. */
function functionEnvironment(
  template: Template,
  functionId: string,
  physicalIds: Readonly<Record<string, string>>,
): Record<string, string> {
  const variables = functionProperties(template, functionId).Environment?.Variables ?? {};
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => {
      if (typeof value === 'string') return [name, value];
      const reference = renderExpression(value).match(/^\$\{([A-Za-z0-9]+)\}$/)?.[1];
      const physical = reference === undefined ? undefined : physicalIds[reference];
      if (physical === undefined)
        throw new Error(`${functionId} ${name} is ${JSON.stringify(value)}; no stand-in for it`);
      return [name, physical];
    }),
  );
}

/** The variables Lambda sets for every function (and the relay as every AWS endpoint). */
function lambdaEnvironment(functionName: string): Record<string, string> {
  return {
    ...LAMBDA_CREDENTIALS,
    AWS_REGION: REGION,
    AWS_DEFAULT_REGION: REGION,
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    TZ: ':UTC',
    AWS_ENDPOINT_URL: relay.url,
  };
}

/** A fresh table created from the template's own key schema, holding one published snapshot. */
async function tableWithSnapshot(
  template: Template,
  tableName: string,
  clusterId: string,
  ruleName: string,
): Promise<void> {
  const table = properties(template, 'RulesTable') as TableProperties;
  const client = createDynamoClient({ endpoint: dynamo.endpoint });
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: table.AttributeDefinitions,
      KeySchema: table.KeySchema,
      BillingMode: table.BillingMode,
    }),
  );
  await snapshotsOf({ client, tableName })(clusterId).publish(contentOf([ruleAdding(ruleName)]));
  // The reviewed Pod's workload (test/support/builders.ts pod()) under Diversity: its review takes a number.
  await placementsOf({ client, tableName })(clusterId).setPlacement({
    namespace: 'apps',
    kind: 'Deployment',
    name: 'web',
    mode: 'Diversity',
    spotPercent: 70,
  });
  client.destroy();
}

/** Unpacks an artifact and invokes the function the template declares, recording its AWS calls. */
async function runShippedFunction(options: {
  readonly template: Template;
  readonly name: 'admission' | 'sync';
  readonly entries: readonly ZipEntry[];
  readonly physicalIds: Readonly<Record<string, string>>;
  readonly arns: Readonly<Record<string, string>>;
  readonly event: unknown;
}): Promise<FunctionRun> {
  const functionId = FUNCTIONS[options.name];
  const lambda = functionProperties(options.template, functionId);
  const taskRoot = await mkdtemp(join(scratch, `task-${options.name}-`));
  await extractZip(options.entries, taskRoot);
  const first = relay.calls.length;
  const invocation = await invokeShippedHandler({
    taskRoot,
    handler: lambda.Handler,
    environment: {
      ...functionEnvironment(options.template, functionId, options.physicalIds),
      ...lambdaEnvironment(lambda.FunctionName),
    },
    event: options.event,
    functionName: lambda.FunctionName,
    memorySize: lambda.MemorySize,
    timeoutSeconds: lambda.Timeout,
  });
  return { invocation, calls: relay.calls.slice(first), arns: options.arns };
}

/** What a run needed from IAM, as `action on resource` lines in the template's notation. */
function neededGrants(run: FunctionRun): string[] {
  const lines = run.calls.map(
    (call) => `${call.action} on ${run.arns[call.resource] ?? `an unexpected resource "${call.resource}"`}`,
  );
  return [...new Set(lines)].sort();
}

function logGrants(template: Template, functionId: string): string[] {
  return LOG_ACTIONS.map((action) => `${action} on ${logStreamsArn(functionLogGroup(template, functionId))}`);
}

function apiGatewayEvent(token: string, body: string): unknown {
  return {
    version: '2.0',
    routeKey: 'POST /admit/{token}',
    rawPath: `/admit/${token}`,
    rawQueryString: 'timeout=5s',
    headers: { 'content-type': 'application/json', host: 'abc123.execute-api.eu-west-1.amazonaws.com' },
    pathParameters: { token },
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      http: {
        method: 'POST',
        path: `/admit/${token}`,
        protocol: 'HTTP/1.1',
        sourceIp: '192.0.2.10',
        userAgent: 'kube-apiserver-admission',
      },
      requestId: 'deploy-test-request',
      routeKey: 'POST /admit/{token}',
      stage: '$default',
      time: '01/Dec/2026:10:00:00 +0000',
      timeEpoch: Date.parse('2026-12-01T10:00:00Z'),
    },
    body,
    isBase64Encoded: false,
  };
}

/** What the code emits: the Powertools namespace, each function's service dimension and its metric names. */
interface MetricsContract {
  readonly namespace: string;
  readonly services: Readonly<Record<'admission' | 'sync', string>>;
  readonly names: Readonly<Record<'admission' | 'sync', ReadonlySet<string>>>;
}

/** Every addMetric('Name', ...) in a function's library folder (the code exports no list of its metric names). */
async function metricNamesIn(folder: 'endpoint' | 'sync'): Promise<Set<string>> {
  const directory = join(ROOT, 'lib', folder);
  const files = (await readdir(directory)).filter((file) => file.endsWith('.ts'));
  const sources = await Promise.all(files.map((file) => readFile(join(directory, file), 'utf8')));
  return new Set(
    sources.flatMap((source) => [...source.matchAll(/addMetric\(\s*'([A-Za-z0-9]+)'/g)].map((match) => match[1]!)),
  );
}

/** Powertools puts every metric in POWERTOOLS_METRICS_NAMESPACE with dimension service = POWERTOOLS_SERVICE_NAME. */
async function metricsContract(template: Template): Promise<MetricsContract> {
  return {
    namespace: literalVariable(template, FUNCTIONS.admission, 'POWERTOOLS_METRICS_NAMESPACE'),
    services: {
      admission: literalVariable(template, FUNCTIONS.admission, 'POWERTOOLS_SERVICE_NAME'),
      sync: literalVariable(template, FUNCTIONS.sync, 'POWERTOOLS_SERVICE_NAME'),
    },
    names: { admission: await metricNamesIn('endpoint'), sync: await metricNamesIn('sync') },
  };
}

/** Why a metric is not one this stack produces, or undefined when it is. */
function metricProblem(metric: AlarmMetric, contract: MetricsContract): string | undefined {
  const where = `${metric.namespace} ${metric.metricName} ${metric.dimensions.join(',')}`;
  if (metric.namespace === 'AWS/Lambda') {
    const ofFunction = Object.values(FUNCTIONS).some((id) => metric.dimensions.join() === `FunctionName=\${${id}}`);
    // The account's concurrency in the region, which every function shares: it has no dimension.
    const accountWide = metric.metricName === 'ConcurrentExecutions' && metric.dimensions.length === 0;
    return (['Errors', 'Duration', 'Throttles', 'ConcurrentExecutions'].includes(metric.metricName) && ofFunction) ||
      accountWide
      ? undefined
      : `${where} is not a Lambda metric of this stack`;
  }
  if (metric.namespace === 'AWS/ApiGateway') {
    const ofApi = metric.dimensions.join() === 'ApiId=${HttpApi}';
    return ['5xx', '4xx', 'Latency', 'IntegrationLatency', 'Count'].includes(metric.metricName) && ofApi
      ? undefined
      : `${where} is not an HTTP API metric of this stack`;
  }
  if (metric.namespace !== contract.namespace) return `${where}: the functions emit into ${contract.namespace}`;
  const owner = (['admission', 'sync'] as const).find(
    (name) => metric.dimensions.join() === `service=${contract.services[name]}`,
  );
  if (owner === undefined) return `${where}: no function emits with these dimensions`;
  return contract.names[owner].has(metric.metricName)
    ? undefined
    : `${where}: the ${owner} function never emits ${metric.metricName}`;
}

/** The metrics a shipped function printed in embedded metric format, as `namespace name service=...` lines. */
function printedMetrics(run: FunctionRun): string[] {
  return embeddedMetrics(run.invocation.lines).flatMap((document) =>
    document._aws.CloudWatchMetrics.flatMap((directive) =>
      directive.Metrics.map((metric) => `${directive.Namespace} ${metric.Name} service=${document.service}`),
    ),
  );
}

/** The variables a configuration reader looks at, observed through a recording environment. */
function variablesRead(
  reader: (env: Readonly<Record<string, string | undefined>>) => unknown,
  env: Readonly<Record<string, string>>,
): Set<string> {
  const read = new Set<string>();
  const recording = new Proxy(env, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return typeof name === 'string' ? target[name] : undefined;
    },
  });
  reader(recording);
  return read;
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'podmutation-deploy-'));
  serviceFolder = join(scratch, 'service');
  const home = join(scratch, 'home');
  await Promise.all([mkdir(serviceFolder), mkdir(home)]);
  await createServiceFolder(serviceFolder);
  config = parse(await readFile(join(ROOT, 'serverless.yml'), 'utf8'), { logLevel: 'error' }) as ServerlessConfig;
  hadDist = existsSync(join(serviceFolder, 'dist'));

  // One at a time: osls clears and rewrites the service folder's .serverless/ while it packages, and each package
  // builds dist/ again.
  ({ template: eksPackaged, output: eksOutput } = await packageServiceWithOutput(
    serviceFolder,
    EKS_PARAMS,
    join(scratch, 'package-eks'),
    home,
  ));
  eksTemplate = effectiveTemplate(eksPackaged);
  kubeconfigTemplate = effectiveTemplate(
    await packageService(serviceFolder, KUBECONFIG_PARAMS, join(scratch, 'package-kubeconfig'), home),
  );
  vpcTemplate = effectiveTemplate(await packageService(serviceFolder, VPC_PARAMS, join(scratch, 'package-vpc'), home));
  withoutClusterName = await runOsls(serviceFolder, packageArgs({}, join(scratch, 'package-missing')), home);
  const subnetsOnly = { clusterName: CLUSTER_NAME, subnetIds: VPC_PARAMS.subnetIds };
  withoutSecurityGroups = await runOsls(
    serviceFolder,
    packageArgs(subnetsOnly, join(scratch, 'package-subnets-only')),
    home,
  );
  tunedTemplate = effectiveTemplate(
    await packageService(serviceFolder, TUNED_PARAMS, join(scratch, 'package-tuned'), home),
  );
  typoEnforcement = await runOsls(
    serviceFolder,
    packageArgs({ clusterName: CLUSTER_NAME, enforcement: 'Audit' }, join(scratch, 'package-typo')),
    home,
  );
  localStage = await runOsls(
    serviceFolder,
    ['package', '--stage', 'local', '--package', join(scratch, 'package-local')],
    home,
  );
  artifacts = {
    eks: await readArtifacts(join(scratch, 'package-eks')),
    kubeconfig: await readArtifacts(join(scratch, 'package-kubeconfig')),
  };

  dynamo = await startEmbeddedDynamo();
  aws = await startFakeAws();
  const secretAccessKey = LAMBDA_CREDENTIALS.AWS_SECRET_ACCESS_KEY;
  apiServer = await startFakeApiServer({
    acceptToken: (token) =>
      token === apiServer.token ||
      isValidEksToken(token, { clusterName: CLUSTER_NAME, region: REGION, secretAccessKey }),
  });
  apiServer.put({
    metadata: { name: 'prefer-arm64-web' },
    spec: {
      enable: true,
      priority: 200,
      workloadSelector: { namespaces: ['production'], kinds: ['Deployment'] },
      mutationAdd: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 60,
              preference: { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] },
            },
          ],
        },
      },
    },
  });
  aws.clusters.set(CLUSTER_NAME, { endpoint: apiServer.url, caData: Buffer.from(apiServer.caPem).toString('base64') });
  aws.secrets.set(WEBHOOK_SECRET_ARN, WEBHOOK_TOKEN);
  aws.secrets.set(STAMP_SECRET_ARN, STAMP_KEY);
  aws.secrets.set(KUBECONFIG_SECRET_ARN, kubeconfigFor(apiServer));
  relay = await startRecordingRelay({ dynamodb: dynamo.endpoint, other: aws.url });

  // Each run gets its own table holding an earlier snapshot, so a sync publishes and supersedes (every write path).
  const clusterId = literalVariable(eksTemplate, FUNCTIONS.admission, 'CLUSTER_ID');
  const tables = {
    admission: 'podmutation-ci-RulesTable-ADMISSION',
    eks: 'podmutation-ci-RulesTable-EKSSYNC',
    kubeconfig: 'podmutation-ci-RulesTable-KUBECONFIG',
  };
  await tableWithSnapshot(eksTemplate, tables.admission, clusterId, 'served-rule');
  await tableWithSnapshot(eksTemplate, tables.eks, clusterId, 'superseded-rule');
  await tableWithSnapshot(kubeconfigTemplate, tables.kubeconfig, clusterId, 'superseded-rule');

  const review = JSON.stringify(admissionReview(pod({ namespace: 'apps' })));
  const admission = await settle(
    runShippedFunction({
      template: eksTemplate,
      name: 'admission',
      entries: artifacts.eks.admission,
      physicalIds: {
        RulesTable: tables.admission,
        WebhookTokenSecret: WEBHOOK_SECRET_ARN,
        StampKeySecret: STAMP_SECRET_ARN,
      },
      arns: {
        [tables.admission]: '${RulesTable.Arn}',
        [WEBHOOK_SECRET_ARN]: '${WebhookTokenSecret}',
        [STAMP_SECRET_ARN]: '${StampKeySecret}',
      },
      event: apiGatewayEvent(WEBHOOK_TOKEN, review),
    }),
  );
  // A manual invocation (not an EventBridge event) syncs once instead of for the whole minute.
  const eksSync = await settle(
    runShippedFunction({
      template: eksTemplate,
      name: 'sync',
      entries: artifacts.eks.sync,
      physicalIds: { RulesTable: tables.eks },
      arns: { [tables.eks]: '${RulesTable.Arn}', [CLUSTER_NAME]: EKS_CLUSTER_ARN },
      event: {},
    }),
  );
  const kubeconfigSync = await settle(
    runShippedFunction({
      template: kubeconfigTemplate,
      name: 'sync',
      entries: artifacts.kubeconfig.sync,
      physicalIds: { RulesTable: tables.kubeconfig },
      arns: { [tables.kubeconfig]: '${RulesTable.Arn}', [KUBECONFIG_SECRET_ARN]: KUBECONFIG_SECRET_ARN },
      event: {},
    }),
  );
  runs = { admission, eksSync, kubeconfigSync };
}, 120_000);

afterAll(async () => {
  await relay?.close();
  await apiServer?.close();
  await aws?.close();
  await dynamo?.close();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe('osls package', () => {
  it('builds the bundles before it packages them: a copy of the project without dist/ packages', () => {
    expect(hadDist).toBe(false);
    for (const name of ['admission', 'sync'] as const) {
      expect(artifacts.eks[name].map((entry) => entry.path)).toContain(`dist/${name}/index.js`);
    }
  });

  it('refuses to package without the clusterName parameter, in one line that says what it is', () => {
    const output = withoutClusterName.stdout + withoutClusterName.stderr;

    expect(withoutClusterName.code).not.toBe(0);
    expect(output).toContain(
      'clusterName is required: the EKS cluster name (or any id in kubeconfig mode); pass --param="clusterName=NAME"',
    );
    expect(output.match(/Cannot resolve variable at/g)).toHaveLength(1);
  });

  it('warns when no alarmTopicArn is set, as the alarms would notify no one, and not when one is', () => {
    expect(eksOutput).toContain("no alarmTopicArn parameter: the stack's alarms change state but notify no one");
    expect(resource(tunedTemplate, 'AdmissionErrorsAlarm').Properties).toMatchObject({
      AlarmActions: [TUNED_PARAMS.alarmTopicArn],
    });
  });

  it('refuses subnetIds without securityGroupIds, naming both', () => {
    expect(withoutSecurityGroups.code).not.toBe(0);
    expect(withoutSecurityGroups.stdout + withoutSecurityGroups.stderr).toMatch(
      /Cannot resolve variable at "functions\.sync\.vpc": subnetIds is set but securityGroupIds is not/,
    );
  });

  it('refuses an enforcement other than enforce or audit at packaging, not at every cold start', () => {
    expect(typoEnforcement.code).not.toBe(0);
    expect(typoEnforcement.stdout + typoEnforcement.stderr).toMatch(
      /the enforcement parameter is "Audit"; expected enforce or audit/,
    );
  });

  it('enforces every rule and writes no migration report by default', () => {
    expect(literalVariable(eksTemplate, FUNCTIONS.admission, 'ENFORCEMENT')).toBe('enforce');
    expect(literalVariable(eksTemplate, FUNCTIONS.sync, 'REPORT_INTERVAL_MINUTES')).toBe('0');
  });

  it('passes the enforcement and reportIntervalMinutes parameters to the functions that read them', () => {
    expect(literalVariable(tunedTemplate, FUNCTIONS.admission, 'ENFORCEMENT')).toBe('audit');
    expect(literalVariable(tunedTemplate, FUNCTIONS.sync, 'REPORT_INTERVAL_MINUTES')).toBe('15');
    expect(functionVariables(tunedTemplate, FUNCTIONS.sync)).not.toHaveProperty('ENFORCEMENT');
  });

  it('refuses to package the local stage, which is the offline profile', () => {
    expect(localStage.code).not.toBe(0);
    expect(localStage.stdout + localStage.stderr).toMatch(/the local stage is the offline profile/);
  });
});

describe('functions', () => {
  it('runs both functions on nodejs22.x on arm64', () => {
    for (const id of Object.values(FUNCTIONS)) {
      expect(properties(eksTemplate, id)).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'] });
    }
  });

  it('points each handler at the handler export of its own bundle', () => {
    expect(properties(eksTemplate, FUNCTIONS.admission)['Handler']).toBe('dist/admission/index.handler');
    expect(properties(eksTemplate, FUNCTIONS.sync)['Handler']).toBe('dist/sync/index.handler');
  });

  it('gives each function the memory and timeout serverless.yml configures', () => {
    for (const name of ['admission', 'sync'] as const) {
      expect(properties(eksTemplate, FUNCTIONS[name])).toMatchObject({
        MemorySize: config.functions[name].memorySize,
        Timeout: config.functions[name].timeout,
      });
    }
  });

  it('answers admissions in under the 5 s the cluster waits by default', () => {
    expect(properties(eksTemplate, FUNCTIONS.admission)['Timeout']).toBeLessThan(5);
  });

  it('reserves exactly one sync instance and gives it at least the minute its window spans', () => {
    const sync = properties(eksTemplate, FUNCTIONS.sync);

    expect(sync['ReservedConcurrentExecutions']).toBe(1);
    expect(sync['Timeout']).toBeGreaterThanOrEqual(60);
  });

  it('drops a failed or throttled sync invocation instead of retrying it behind the next one', () => {
    const configs = resourcesOfType(eksTemplate, 'AWS::Lambda::EventInvokeConfig').map((id) =>
      properties(eksTemplate, id),
    );

    expect(configs).toEqual([
      expect.objectContaining({
        FunctionName: { Ref: FUNCTIONS.sync },
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: 60,
      }) as unknown,
    ]);
  });

  it('sets no variable Lambda reserves for itself', () => {
    for (const id of Object.values(FUNCTIONS)) {
      const names = Object.keys(functionVariables(eksTemplate, id));
      expect(names.filter((name) => /^(AWS_|LAMBDA_|_)/.test(name))).toEqual([]);
    }
  });

  it('sets only variables the function reads: its configuration reader, or Powertools its own', () => {
    const unread = (
      env: Record<string, string>,
      reader: (env: Readonly<Record<string, string | undefined>>) => unknown,
    ) => {
      const read = variablesRead(reader, { ...env, AWS_REGION: REGION });
      return Object.keys(env).filter((name) => !read.has(name) && !name.startsWith('POWERTOOLS_'));
    };

    expect(
      unread(
        functionEnvironment(eksTemplate, FUNCTIONS.admission, {
          RulesTable: 'rules',
          WebhookTokenSecret: WEBHOOK_SECRET_ARN,
          StampKeySecret: STAMP_SECRET_ARN,
        }),
        readAdmissionConfig,
      ),
    ).toEqual([]);
    expect(unread(functionEnvironment(eksTemplate, FUNCTIONS.sync, { RulesTable: 'rules' }), readSyncConfig)).toEqual(
      [],
    );
  });

  it('configures the admission function for the table, the token secret, the stamp key secret and the cluster id', () => {
    const env = functionEnvironment(eksTemplate, FUNCTIONS.admission, {
      RulesTable: 'podmutation-ci-RulesTable-1',
      WebhookTokenSecret: WEBHOOK_SECRET_ARN,
      StampKeySecret: STAMP_SECRET_ARN,
    });

    expect(readAdmissionConfig(env)).toMatchObject({
      store: { tableName: 'podmutation-ci-RulesTable-1', clusterId: CLUSTER_NAME },
      token: { kind: 'secret', secretArn: WEBHOOK_SECRET_ARN },
      stampKey: { kind: 'secret', secretArn: STAMP_SECRET_ARN },
    });
  });

  it('configures the sync for EKS access to the cluster when no kubeconfig secret is given', () => {
    const env = {
      ...functionEnvironment(eksTemplate, FUNCTIONS.sync, { RulesTable: 'podmutation-ci-RulesTable-1' }),
      AWS_REGION: REGION,
    };

    expect(readSyncConfig(env).cluster).toEqual({ mode: 'eks', clusterName: CLUSTER_NAME, region: REGION });
  });

  it('configures the sync for the kubeconfig secret alone when one is given', () => {
    const env = {
      ...functionEnvironment(kubeconfigTemplate, FUNCTIONS.sync, { RulesTable: 'podmutation-ci-RulesTable-1' }),
      AWS_REGION: REGION,
    };

    expect(readSyncConfig(env).cluster).toMatchObject({ mode: 'kubeconfigSecret', secretArn: KUBECONFIG_SECRET_ARN });
  });
});

describe('artifacts', () => {
  it('ships exactly the files the build wrote into dist/ for each function, byte for byte, and no source map', async () => {
    for (const name of ['admission', 'sync'] as const) {
      const built = await filesUnder(serviceFolder, join('dist', name));
      const shipped = artifacts.eks[name].map(({ path, size, crc32 }) => ({ path, size, crc32 }));

      expect(shipped).toEqual(built);
      expect(shipped.map((file) => file.path)).toContain(`dist/${name}/index.js`);
      expect(shipped.filter((file) => file.path.endsWith('.map'))).toEqual([]);
    }
  });

  it('ships the same bundles whatever the parameters', () => {
    const fingerprint = (entries: readonly ZipEntry[]) => entries.map(({ path, crc32 }) => `${path} ${crc32}`);

    expect(fingerprint(artifacts.kubeconfig.admission)).toEqual(fingerprint(artifacts.eks.admission));
    expect(fingerprint(artifacts.kubeconfig.sync)).toEqual(fingerprint(artifacts.eks.sync));
  });

  it('answers an AdmissionReview from the unpacked admission artifact alone', () => {
    const result = ran('admission').invocation.result as APIGatewayProxyStructuredResultV2;

    expect(result.statusCode).toBe(200);
    expect(parseAnswer(result.body ?? '').response).toMatchObject({
      uid: 'b3a1d2c4-0e5f-4a6b-8c7d-9e0f1a2b3c4d',
      allowed: true,
    });
  });

  it("stamps the Pod it changes under the key in the stack's stamp secret", () => {
    const result = ran('admission').invocation.result as APIGatewayProxyStructuredResultV2;
    const stamps = decodePatch(parseAnswer(result.body ?? '').response.patch).flatMap((operation) => {
      const value: unknown = 'value' in operation ? operation.value : undefined;
      if (operation.path === '/metadata/annotations') return [(value as Record<string, string>)[STAMP_ANNOTATION]];
      return operation.path.endsWith('~1stamp') ? [value as string] : [];
    });
    const [stamp] = stamps.map((text) => JSON.parse(text!) as { sum: string; mac: string });

    expect(stamps).toHaveLength(1);
    expect(keyedStamps(STAMP_KEY).key!.verify(stamp!.sum, stamp!.mac)).toBe(true);
  });

  it('publishes a snapshot from the unpacked sync artifact in EKS mode', () => {
    expect(ran('eksSync').invocation.result).toMatchObject({ outcome: 'published', resources: 1 });
  });

  it('publishes a snapshot from the unpacked sync artifact in kubeconfig mode', () => {
    expect(ran('kubeconfigSync').invocation.result).toMatchObject({ outcome: 'published', resources: 1 });
  });
});

describe('HTTP API', () => {
  it('routes POST /admit/{token} to the admission function with payload format 2.0', () => {
    const routes = resourcesOfType(eksTemplate, 'AWS::ApiGatewayV2::Route').map((id) => properties(eksTemplate, id));
    const integrationId =
      renderExpression(routes[0]?.['Target']).match(/^integrations\/\$\{([A-Za-z0-9]+)\}$/)?.[1] ?? '';

    expect(routes.map((route) => route['RouteKey'])).toEqual(['POST /admit/{token}']);
    expect(properties(eksTemplate, integrationId)).toMatchObject({
      IntegrationType: 'AWS_PROXY',
      IntegrationUri: { 'Fn::GetAtt': [FUNCTIONS.admission, 'Arn'] },
      PayloadFormatVersion: '2.0',
    });
  });

  it('throttles every route before Lambda: 1,000 requests a second and a burst of 2,000 by default, or the parameters', () => {
    expect(properties(eksTemplate, 'HttpApiStage')['DefaultRouteSettings']).toEqual({
      ThrottlingRateLimit: 1000,
      ThrottlingBurstLimit: 2000,
    });
    expect(properties(tunedTemplate, 'HttpApiStage')['DefaultRouteSettings']).toEqual({
      ThrottlingRateLimit: 250,
      ThrottlingBurstLimit: 500,
    });
  });

  it('writes an access log line per request in JSON, with the route key and never the path that holds the token', () => {
    const settings = properties(eksTemplate, 'HttpApiStage')['AccessLogSettings'] as {
      DestinationArn: unknown;
      Format: string;
    };
    const fields = JSON.parse(settings.Format) as Record<string, string>;

    expect(fields).toMatchObject({
      routeKey: '$context.routeKey',
      status: '$context.status',
      requestId: '$context.requestId',
    });
    expect(settings.Format).not.toMatch(/\$context\.(path|rawPath|resourcePath)\b/);
    expect(renderExpression(settings.DestinationArn)).toBe('${HttpApiLogGroup.Arn}');
    expect(properties(eksTemplate, 'HttpApiLogGroup')).toMatchObject({ RetentionInDays: 30 });
  });

  it('lets only API Gateway invoke the admission function', () => {
    const permissions = resourcesOfType(eksTemplate, 'AWS::Lambda::Permission')
      .map((id) => properties(eksTemplate, id))
      .filter((permission) => renderExpression(permission['FunctionName']) === `\${${FUNCTIONS.admission}.Arn}`);

    expect(permissions).toHaveLength(1);
    expect(permissions[0]).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
    expect(renderExpression(permissions[0]!['SourceArn'])).toBe(
      'arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${HttpApi}/*',
    );
  });
});

describe('provisioned concurrency', () => {
  const lambdaResources = (template: Template) => [
    ...resourcesOfType(template, 'AWS::Lambda::Alias'),
    ...resourcesOfType(template, 'AWS::Lambda::Version'),
  ];
  const integrationUri = (template: Template) =>
    renderExpression(
      properties(template, resourcesOfType(template, 'AWS::ApiGatewayV2::Integration')[0]!)['IntegrationUri'],
    );

  it('keeps no environment initialized by default: no version, no alias, and the HTTP API invokes the function itself', () => {
    expect(config.params.default['provisionedConcurrency']).toBe(0);
    expect(lambdaResources(eksTemplate)).toEqual([]);
    expect(integrationUri(eksTemplate)).toBe(`\${${FUNCTIONS.admission}.Arn}`);
  });

  it('keeps the given number of admission environments initialized, behind the alias the HTTP API invokes', () => {
    const [alias] = resourcesOfType(tunedTemplate, 'AWS::Lambda::Alias');
    const aliasProperties = properties(tunedTemplate, alias!);
    const version =
      renderExpression(aliasProperties['FunctionVersion']).match(/^\$\{([A-Za-z0-9]+)\.Version\}$/)?.[1] ?? '';
    const permission = resourcesOfType(tunedTemplate, 'AWS::Lambda::Permission')
      .map((id) => properties(tunedTemplate, id))
      .find((candidate) => candidate['Principal'] === 'apigateway.amazonaws.com');

    expect(aliasProperties).toMatchObject({
      FunctionName: { Ref: FUNCTIONS.admission },
      Name: 'provisioned',
      ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: Number(TUNED_PARAMS.provisionedConcurrency) },
    });
    expect(properties(tunedTemplate, version)['FunctionName']).toEqual({ Ref: FUNCTIONS.admission });
    expect(integrationUri(tunedTemplate)).toBe(`\${${FUNCTIONS.admission}.Arn}:provisioned`);
    expect(renderExpression(permission?.['FunctionName'])).toBe(`\${${FUNCTIONS.admission}.Arn}:provisioned`);
  });

  it('keeps nothing initialized for the sync function, which runs once a minute under its reserved concurrency of 1', () => {
    const aliasFunctions = resourcesOfType(tunedTemplate, 'AWS::Lambda::Alias').map(
      (id) => properties(tunedTemplate, id)['FunctionName'],
    );

    expect(aliasFunctions).toEqual([{ Ref: FUNCTIONS.admission }]);
  });
});

describe('schedule', () => {
  it('invokes the sync function every minute', () => {
    const rules = resourcesOfType(eksTemplate, 'AWS::Events::Rule').map((id) => properties(eksTemplate, id));

    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    expect((rules[0]!['Targets'] as readonly { readonly Arn: unknown }[]).map((target) => target.Arn)).toEqual([
      { 'Fn::GetAtt': [FUNCTIONS.sync, 'Arn'] },
    ]);
  });
});

describe('rules table', () => {
  it('bills on demand with point-in-time recovery and encryption at rest', () => {
    expect(properties(eksTemplate, 'RulesTable')).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    });
  });

  it('expires items on the attribute the store writes on superseded parts', () => {
    expect(properties(eksTemplate, 'RulesTable')['TimeToLiveSpecification']).toEqual({
      AttributeName: EXPIRES_AT_ATTRIBUTE,
      Enabled: true,
    });
  });

  it('keeps the table and its rules when the stack is deleted or the table replaced', () => {
    expect(resource(eksTemplate, 'RulesTable')).toMatchObject({
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });
});

describe('stamp key secret', () => {
  it('generates a key the admission function accepts, in a secret of its own that no rotation of the token touches', () => {
    const generated = properties(eksTemplate, 'StampKeySecret')['GenerateSecretString'] as {
      readonly PasswordLength: number;
    };

    expect(generated).toMatchObject({ ExcludePunctuation: true, IncludeSpace: false });
    expect(() => checkedStampKey('a'.repeat(generated.PasswordLength), 'the generated key')).not.toThrow();
    expect(resource(eksTemplate, 'StampKeySecret')).not.toHaveProperty('Properties.RotationRules');
  });
});

describe('webhook token secret', () => {
  it('generates a token of a length and alphabet the admission function accepts', () => {
    const generated = properties(eksTemplate, 'WebhookTokenSecret')['GenerateSecretString'] as {
      readonly PasswordLength: number;
    };

    expect(generated).toMatchObject({ ExcludePunctuation: true, IncludeSpace: false });
    expect(() => checkedToken('a'.repeat(generated.PasswordLength), 'the generated token')).not.toThrow();
  });
});

describe('log groups', () => {
  it("keeps each function's logs for the default retention", () => {
    for (const id of Object.values(FUNCTIONS)) {
      expect(properties(eksTemplate, functionLogGroup(eksTemplate, id))['RetentionInDays']).toBe(
        config.params.default['logRetentionInDays'],
      );
    }
  });

  it("keeps each function's logs for the logRetentionInDays parameter when given", () => {
    for (const id of Object.values(FUNCTIONS)) {
      expect(properties(kubeconfigTemplate, functionLogGroup(kubeconfigTemplate, id))['RetentionInDays']).toBe(7);
    }
  });
});

describe('alarms', () => {
  const metricsOf = (template: Template, id: string) => alarmMetrics(resource(template, id));

  it('has an alarm for admission errors, 5xx answers, throttles, slowness, the account concurrency, a denial spike, sync failures, stale rules and rules that strand Pods', () => {
    expect(resourcesOfType(eksTemplate, 'AWS::CloudWatch::Alarm')).toEqual([...ALARMS].sort());
  });

  it('reads only metrics the functions emit, in their namespace and service dimension, or AWS metrics of this stack', async () => {
    const contract = await metricsContract(eksTemplate);
    const problems = ALARMS.flatMap((id) =>
      metricsOf(eksTemplate, id)
        .map((metric) => metricProblem(metric, contract))
        .filter(Boolean),
    );

    expect(problems).toEqual([]);
  });

  it('counts failed admission invocations and the internal errors the handler answers with 500', async () => {
    const { services } = await metricsContract(eksTemplate);

    expect(
      metricsOf(eksTemplate, 'AdmissionErrorsAlarm')
        .map((metric) => `${metric.metricName} ${metric.dimensions.join(',')}`)
        .sort(),
    ).toEqual([`Errors FunctionName=\${${FUNCTIONS.admission}}`, `Errors service=${services.admission}`]);
  });

  it('counts 5xx answers of the webhook endpoint', () => {
    expect(metricsOf(eksTemplate, 'Admission5xxAlarm')).toMatchObject([
      { namespace: 'AWS/ApiGateway', metricName: '5xx', stat: 'Sum' },
    ]);
  });

  it('alarms on any throttled admission invocation, which the cluster admits unmutated', () => {
    expect(metricsOf(eksTemplate, 'AdmissionThrottlesAlarm')).toEqual([
      expect.objectContaining({
        namespace: 'AWS/Lambda',
        metricName: 'Throttles',
        dimensions: [`FunctionName=\${${FUNCTIONS.admission}}`],
        stat: 'Sum',
        period: 60,
      }) as unknown,
    ]);
    expect(properties(eksTemplate, 'AdmissionThrottlesAlarm')).toMatchObject({
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it("alarms when the slowest admissions take 80% of the admission function's timeout", () => {
    expect(metricsOf(eksTemplate, 'AdmissionSlowAlarm')).toEqual([
      expect.objectContaining({
        metricName: 'Duration',
        dimensions: [`FunctionName=\${${FUNCTIONS.admission}}`],
        stat: 'p99',
        period: 60,
      }) as unknown,
    ]);
    expect(properties(eksTemplate, 'AdmissionSlowAlarm')['Threshold']).toBe(
      config.functions.admission.timeout * 1000 * NEAR_LIMIT,
    );
  });

  it("alarms at 80% of the account's concurrency quota in the region: AWS's default 1,000, or the concurrencyQuota parameter", () => {
    expect(metricsOf(eksTemplate, 'LambdaConcurrencyAlarm')).toEqual([
      expect.objectContaining({
        namespace: 'AWS/Lambda',
        metricName: 'ConcurrentExecutions',
        dimensions: [],
        stat: 'Maximum',
      }) as unknown,
    ]);
    expect(properties(eksTemplate, 'LambdaConcurrencyAlarm')['Threshold']).toBe(
      Number(config.params.default['concurrencyQuota']) * NEAR_LIMIT,
    );
    expect(properties(tunedTemplate, 'LambdaConcurrencyAlarm')['Threshold']).toBe(
      Number(TUNED_PARAMS.concurrencyQuota) * NEAR_LIMIT,
    );
  });

  it('counts denials over five minutes', async () => {
    const { services } = await metricsContract(eksTemplate);

    expect(metricsOf(eksTemplate, 'DenialsSpikeAlarm')).toEqual([
      expect.objectContaining({
        metricName: 'Denials',
        dimensions: [`service=${services.admission}`],
        stat: 'Sum',
        period: 300,
      }) as unknown,
    ]);
  });

  it('alarms on token refresh failures that last 15 minutes', async () => {
    const { services } = await metricsContract(eksTemplate);

    expect(metricsOf(eksTemplate, 'TokenRefreshFailuresAlarm')).toEqual([
      expect.objectContaining({
        metricName: 'TokenRefreshFailures',
        dimensions: [`service=${services.admission}`],
        stat: 'Sum',
        period: 300,
      }) as unknown,
    ]);
    expect(properties(eksTemplate, 'TokenRefreshFailuresAlarm')).toMatchObject({
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
  });

  it('counts failed syncs and failed sync invocations', async () => {
    const { services } = await metricsContract(eksTemplate);

    expect(
      metricsOf(eksTemplate, 'SyncFailuresAlarm')
        .map((metric) => `${metric.metricName} ${metric.dimensions.join(',')}`)
        .sort(),
    ).toEqual([`Errors FunctionName=\${${FUNCTIONS.sync}}`, `SyncErrors service=${services.sync}`]);
  });

  it('fires when syncs ran for 5 minutes and none succeeded: each failed or skipped', () => {
    const alarm = resource(eksTemplate, 'RulesStaleAlarm');
    const stats = metricsOf(eksTemplate, 'RulesStaleAlarm').map(
      (metric) => `${metric.id}=${metric.stat}(${metric.metricName}, ${metric.period} s)`,
    );

    expect(stats.sort()).toEqual([
      'failedSyncs=Sum(SyncErrors, 300 s)',
      'skippedSyncs=Sum(SyncSkipped, 300 s)',
      'syncs=SampleCount(SyncErrors, 300 s)',
    ]);
    expect(alarmExpression(alarm)).toBe('syncs - failedSyncs - skippedSyncs');
    expect(alarm.Properties).toMatchObject({
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: 1,
    });
  });

  it('fires no alarm on a new stack before its first sync: no alarm treats missing data as breaching', () => {
    const treatment: Readonly<Record<string, string>> = {
      RulesStaleAlarm: 'missing',
      // Reported every reportIntervalMinutes: between reports the state the last one set holds.
      UnschedulableRulesAlarm: 'ignore',
    };
    expect(ALARMS.map((id) => `${id} ${String(properties(eksTemplate, id)['TreatMissingData'])}`)).toEqual(
      ALARMS.map((id) => `${id} ${treatment[id] ?? 'notBreaching'}`),
    );
  });

  it('fires at the first migration report that finds a rule stranding Pods, and clears at the first that finds none', async () => {
    const { services } = await metricsContract(eksTemplate);

    expect(metricsOf(eksTemplate, 'UnschedulableRulesAlarm')).toEqual([
      expect.objectContaining({
        metricName: 'UnschedulableRules',
        dimensions: [`service=${services.sync}`],
        stat: 'Maximum',
        period: 60,
      }) as unknown,
    ]);
    expect(properties(eksTemplate, 'UnschedulableRulesAlarm')).toMatchObject({
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('notifies the alarm topic when syncs stop reporting: the stale-rules alarm leaves OK for INSUFFICIENT_DATA', () => {
    expect(properties(kubeconfigTemplate, 'RulesStaleAlarm')['InsufficientDataActions']).toEqual([ALARM_TOPIC_ARN]);
    expect(properties(eksTemplate, 'RulesStaleAlarm')['InsufficientDataActions']).toBeUndefined();
  });

  it('notifies no one when no alarm topic is given', () => {
    for (const id of ALARMS) {
      expect(properties(eksTemplate, id)['AlarmActions']).toBeUndefined();
    }
  });

  it('notifies the alarm topic of alarms and recoveries when one is given', () => {
    for (const id of ALARMS) {
      expect(properties(kubeconfigTemplate, id)).toMatchObject({
        AlarmActions: [ALARM_TOPIC_ARN],
        OKActions: [ALARM_TOPIC_ARN],
      });
    }
  });

  it('reads the namespace and service dimension the shipped admission bundle prints its metrics with', async () => {
    const { namespace, services, names } = await metricsContract(eksTemplate);
    const printed = printedMetrics(ran('admission')).filter((line) => !line.includes(' ColdStart '));
    const expected = [...names.admission].map((name) => `${namespace} ${name} service=${services.admission}`);

    expect(printed).toContain(`${namespace} Admissions service=${services.admission}`);
    expect(printed.filter((line) => !expected.includes(line))).toEqual([]);
  });

  it('reads the namespace and service dimension the shipped sync bundle prints its metrics with', async () => {
    const { namespace, services, names } = await metricsContract(eksTemplate);
    const printed = printedMetrics(ran('eksSync'));
    const expected = [...names.sync].map((name) => `${namespace} ${name} service=${services.sync}`);

    expect(printed).toContain(`${namespace} SyncErrors service=${services.sync}`);
    expect(printed.filter((line) => !expected.includes(line))).toEqual([]);
  });
});

describe('dashboard', () => {
  const body = (template: Template) => {
    const dashboard = properties(template, 'Dashboard');
    return JSON.parse(
      renderExpression(dashboard['DashboardBody']).replaceAll('${AWS::Region}', REGION),
    ) as DashboardBody;
  };
  /** Each widget's metric names, with an expression's id standing for itself. */
  const metricWidgets = (template: Template) =>
    body(template).widgets.flatMap((widget) => (widget.type === 'metric' ? [widget] : []));
  const logQueries = (template: Template) =>
    body(template).widgets.flatMap((widget) => (widget.type === 'log' ? [widget.properties.query] : []));
  const widgetMetrics = (template: Template): string[][] =>
    metricWidgets(template).map((widget) =>
      widget.properties.metrics.map((row) =>
        isExpressionRow(row) ? `expression ${row[0].expression}` : `${row[0]} ${row[1]}`,
      ),
    );

  it('has a body that parses as JSON once CloudFormation substitutes it', () => {
    expect(body(eksTemplate).widgets.length).toBeGreaterThanOrEqual(5);
  });

  it('has widgets for admissions, mutations, denials, latency, sync age, and rules synced beside those stranding Pods', async () => {
    const { namespace } = await metricsContract(eksTemplate);
    const widgets = widgetMetrics(eksTemplate);
    const widgetWith = (...metrics: string[]) =>
      widgets.some((widget) => metrics.every((metric) => widget.includes(metric)));

    expect(widgetWith(`${namespace} Admissions`)).toBe(true);
    expect(widgetWith(`${namespace} Mutations`)).toBe(true);
    expect(widgetWith(`${namespace} Denials`)).toBe(true);
    expect(widgetWith('AWS/Lambda Duration')).toBe(true);
    expect(widgetWith(`${namespace} RulesSynced`, `${namespace} UnschedulableRules`)).toBe(true);
    expect(
      widgetWith(
        'expression syncs - failedSyncs - skippedSyncs',
        `${namespace} SyncErrors`,
        `${namespace} SyncSkipped`,
      ),
    ).toBe(true);
  });

  it("shows the admission function's concurrency and throttles beside the concurrency of every function of the account", () => {
    const rows = metricWidgets(eksTemplate)
      .flatMap((widget) => widget.properties.metrics)
      .filter(isNamedRow);
    const shown = rows.map(
      ([namespace, name, ...rest]) =>
        `${namespace} ${name} ${rest.filter((item) => typeof item === 'string').join('=')}`,
    );

    expect(shown).toEqual(
      expect.arrayContaining([
        `AWS/Lambda ConcurrentExecutions FunctionName=\${${FUNCTIONS.admission}}`,
        'AWS/Lambda ConcurrentExecutions ',
        `AWS/Lambda Throttles FunctionName=\${${FUNCTIONS.admission}}`,
      ]),
    );
  });

  it('ranks rules by applied and by audited admissions from the admission function log lines, with no per-rule metric', () => {
    const queries = logQueries(eksTemplate);
    // The Ref of the function is its name, and Lambda logs to /aws/lambda/<name>.
    const admissionLog = "SOURCE '/aws/lambda/${AdmissionLambdaFunction}'";

    expect(queries).toHaveLength(2);
    for (const query of queries) expect(query.startsWith(admissionLog)).toBe(true);
    expect(queries[0]).toContain('unnest line.rules into rule | stats count(*) as admissions by rule');
    expect(queries[1]).toContain('unnest line.audited into match | stats count(*) as matches');
  });

  it('reads code metrics only with the service dimension of the function that emits them', async () => {
    const contract = await metricsContract(eksTemplate);
    const rows = metricWidgets(eksTemplate)
      .flatMap((widget) => widget.properties.metrics)
      .filter(isNamedRow);
    const problems = rows
      .map(([namespace, metricName, ...rest]) => {
        const dimensions = rest.filter((item) => typeof item === 'string');
        const pairs = dimensions.flatMap((item, index) =>
          index % 2 === 0 ? [`${item}=${dimensions[index + 1]}`] : [],
        );
        return { id: 'widget', namespace, metricName, dimensions: pairs, stat: '', period: 0 };
      })
      .map((metric) => metricProblem(metric, contract))
      .filter(Boolean);

    expect(rows.some((row) => row[0] === contract.namespace)).toBe(true);
    expect(problems).toEqual([]);
  });
});

describe('IAM', () => {
  const templates = () => ({ eks: eksTemplate, kubeconfig: kubeconfigTemplate });

  it('creates no IAM roles or policies besides the two function roles, and attaches no managed policies', () => {
    for (const template of Object.values(templates())) {
      const iam = Object.keys(template.Resources).filter((id) => template.Resources[id]!.Type.startsWith('AWS::IAM::'));

      expect(iam.sort()).toEqual(['AdmissionRole', 'SyncRole']);
      expect(iam.map((id) => properties(template, id)['ManagedPolicyArns'])).toEqual([undefined, undefined]);
      expect(Object.values(FUNCTIONS).map((id) => functionRole(template, id))).toEqual(['AdmissionRole', 'SyncRole']);
    }
  });

  it('lets only Lambda assume the roles', () => {
    for (const role of ['AdmissionRole', 'SyncRole']) {
      expect((properties(eksTemplate, role)['AssumeRolePolicyDocument'] as PolicyDocument).Statement).toEqual([
        { Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' },
      ]);
    }
  });

  it("only allows, with no wildcard action and no wildcard resource but the streams of the function's own log group", () => {
    for (const template of Object.values(templates())) {
      for (const id of Object.values(FUNCTIONS)) {
        const ownStreams = logStreamsArn(functionLogGroup(template, id));
        const statements = roleStatements(template, functionRole(template, id));

        expect(statements.length).toBeGreaterThan(0);
        for (const statement of statements) {
          // The one condition is the counter write's (the test below reads it).
          const conditioned = statement.actions.join() === 'dynamodb:UpdateItem' && id === FUNCTIONS.admission;
          expect(statement).toMatchObject({ effect: 'Allow', otherKeys: conditioned ? ['Condition'] : [] });
          expect(statement.actions.filter((action) => action.includes('*'))).toEqual([]);
          expect(statement.resources.filter((arn) => arn.includes('*') && arn !== ownStreams)).toEqual([]);
        }
      }
    }
  });

  it('in a VPC, adds wildcards only where EC2 takes no narrower resource: Describe actions, and the interfaces Lambda names', () => {
    const added = roleStatements(vpcTemplate, 'SyncRole').filter((statement) =>
      statement.actions.some((action) => action.startsWith('ec2:')),
    );
    const wildcards = added.flatMap((statement) =>
      statement.resources.filter((arn) => arn.includes('*')).map((arn) => `${statement.actions.join(',')} on ${arn}`),
    );

    expect(added.every((statement) => statement.effect === 'Allow' && statement.otherKeys.length === 0)).toBe(true);
    expect(wildcards.sort()).toEqual([
      `ec2:CreateNetworkInterface on ${EC2_ARN}:network-interface/*`,
      `ec2:DeleteNetworkInterface,ec2:AssignPrivateIpAddresses,ec2:UnassignPrivateIpAddresses on ${EC2_ARN}:network-interface/*`,
      'ec2:DescribeNetworkInterfaces,ec2:DescribeSubnets on *',
    ]);
  });

  it('lets the admission function write only the Diversity counters: UpdateItem of the key and n, returning UPDATED_NEW', () => {
    const dynamodb = roleGrants(eksTemplate, 'AdmissionRole').filter((grant) => grant.startsWith('dynamodb:'));
    const writes = roleStatements(eksTemplate, 'AdmissionRole').filter((statement) =>
      statement.actions.some((action) => action.startsWith('dynamodb:') && !DYNAMODB_READ_ACTIONS.includes(action)),
    );

    expect(dynamodb.length).toBeGreaterThan(0);
    expect(writes.map((statement) => [statement.actions, statement.resources, statement.condition])).toEqual([
      [
        ['dynamodb:UpdateItem'],
        ['${RulesTable.Arn}'],
        {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'n'] },
          StringEquals: { 'dynamodb:ReturnValues': 'UPDATED_NEW' },
        },
      ],
    ]);
  });

  it('grants the admission role exactly the AWS calls the shipped admission bundle makes, and its logs', () => {
    expect(neededGrants(ran('admission'))).toEqual([
      'dynamodb:GetItem on ${RulesTable.Arn}',
      'dynamodb:Query on ${RulesTable.Arn}',
      'dynamodb:UpdateItem on ${RulesTable.Arn}',
      'secretsmanager:GetSecretValue on ${StampKeySecret}',
      'secretsmanager:GetSecretValue on ${WebhookTokenSecret}',
    ]);
    expect(roleGrants(eksTemplate, 'AdmissionRole')).toEqual(
      [...neededGrants(ran('admission')), ...logGrants(eksTemplate, FUNCTIONS.admission)].sort(),
    );
  });

  it('grants the EKS-mode sync role exactly the AWS calls the shipped sync bundle makes, and its logs', () => {
    expect(neededGrants(ran('eksSync'))).toContain(`eks:DescribeCluster on ${EKS_CLUSTER_ARN}`);
    expect(roleGrants(eksTemplate, 'SyncRole')).toEqual(
      [...neededGrants(ran('eksSync')), ...logGrants(eksTemplate, FUNCTIONS.sync)].sort(),
    );
  });

  it('grants the kubeconfig-mode sync role reading its kubeconfig secret instead of describing the cluster', () => {
    expect(neededGrants(ran('kubeconfigSync'))).toContain(`secretsmanager:GetSecretValue on ${KUBECONFIG_SECRET_ARN}`);
    expect(roleGrants(kubeconfigTemplate, 'SyncRole')).toEqual(
      [...neededGrants(ran('kubeconfigSync')), ...logGrants(kubeconfigTemplate, FUNCTIONS.sync)].sort(),
    );
  });
});

describe('outputs', () => {
  it('outputs the webhook base URL, the table name, the cluster id and the token secret ARN', () => {
    expect(eksTemplate.Outputs).toMatchObject({
      WebhookBaseUrl: { Value: { 'Fn::GetAtt': ['HttpApi', 'ApiEndpoint'] } },
      RulesTableName: { Value: { Ref: 'RulesTable' } },
      ClusterId: { Value: CLUSTER_NAME },
      WebhookTokenSecretArn: { Value: { Ref: 'WebhookTokenSecret' } },
    });
  });

  it('outputs the cluster id both functions key their items with', () => {
    for (const id of Object.values(FUNCTIONS)) {
      expect(literalVariable(eksTemplate, id, 'CLUSTER_ID')).toBe(eksTemplate.Outputs['ClusterId']?.Value);
    }
  });
});

describe('a sync function in a VPC (subnetIds and securityGroupIds)', () => {
  /** A function's properties but those named; Code always differs, as each package has its own artifact folder. */
  const propertiesWithout = (template: Template, functionId: string, ...names: string[]) =>
    Object.fromEntries(
      Object.entries(functionProperties(template, functionId)).filter(([name]) => !['Code', ...names].includes(name)),
    );

  it('puts the sync function in the given subnets and security groups', () => {
    expect(functionProperties(vpcTemplate, FUNCTIONS.sync)['VpcConfig']).toEqual({
      SubnetIds: SUBNET_IDS,
      SecurityGroupIds: SECURITY_GROUP_IDS,
    });
  });

  it('changes nothing else of the sync function, and nothing of the admission function', () => {
    expect(propertiesWithout(vpcTemplate, FUNCTIONS.sync, 'VpcConfig')).toEqual(
      propertiesWithout(eksTemplate, FUNCTIONS.sync),
    );
    expect(propertiesWithout(vpcTemplate, FUNCTIONS.admission)).toEqual(
      propertiesWithout(eksTemplate, FUNCTIONS.admission),
    );
  });

  it('without the parameters, writes no VpcConfig at all, even behind a condition', () => {
    for (const id of Object.values(FUNCTIONS)) {
      expect(Object.keys(resource(eksPackaged, id).Properties)).not.toContain('VpcConfig');
      expect(Object.keys(resource(kubeconfigTemplate, id).Properties)).not.toContain('VpcConfig');
    }
  });

  it('grants the sync role exactly the network interface actions Lambda needs on top of its own, none without the parameters', () => {
    const own = roleGrants(eksTemplate, 'SyncRole');
    const eni = (action: string, arns: readonly string[]) => arns.map((arn) => `${action} on ${arn}`);

    expect(own.filter((grant) => grant.startsWith('ec2:'))).toEqual([]);
    expect(
      roleGrants(vpcTemplate, 'SyncRole')
        .filter((grant) => !own.includes(grant))
        .sort(),
    ).toEqual(
      [
        ...eni('ec2:DescribeNetworkInterfaces', ['*']),
        ...eni('ec2:DescribeSubnets', ['*']),
        ...eni('ec2:CreateNetworkInterface', [
          `${EC2_ARN}:network-interface/*`,
          ...SUBNET_IDS.map((id) => `${EC2_ARN}:subnet/${id}`),
          ...SECURITY_GROUP_IDS.map((id) => `${EC2_ARN}:security-group/${id}`),
        ]),
        ...['ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'].flatMap(
          (action) => eni(action, [`${EC2_ARN}:network-interface/*`]),
        ),
      ].sort(),
    );
    expect(roleGrants(vpcTemplate, 'AdmissionRole')).toEqual(roleGrants(eksTemplate, 'AdmissionRole'));
  });
});

describe('cluster access (EKS mode)', () => {
  interface RbacManifest {
    readonly kind: string;
    readonly metadata: { readonly name: string; readonly labels?: Readonly<Record<string, string>> };
    readonly subjects?: readonly { readonly kind: string; readonly name: string }[];
  }

  const rbacManifests = async (): Promise<RbacManifest[]> =>
    parseAllDocuments(await readFile(join(ROOT, 'infra', 'rbac.yaml'), 'utf8')).map(
      (document) => document.toJS() as RbacManifest,
    );

  it('applies, with the label selector each mode is given, only the objects that mode uses', async () => {
    // kubectl's `key!=value`: objects without the label match too.
    const selected = (manifests: readonly RbacManifest[], excluded: string) =>
      manifests
        .filter((manifest) => manifest.metadata.labels?.['podmutation.agent.cloudpilot.ai/access'] !== excluded)
        .map((manifest) => `${manifest.kind}/${manifest.metadata.name}`);
    const manifests = await rbacManifests();

    expect(selected(manifests, 'kubeconfig')).toEqual([
      'ClusterRole/podmutation-sync',
      'ClusterRoleBinding/podmutation-sync',
    ]);
    expect(selected(manifests, 'eks-access-entry')).toEqual([
      'Namespace/podmutation-system',
      'ClusterRole/podmutation-sync',
      'ServiceAccount/podmutation-sync',
      'ClusterRoleBinding/podmutation-sync-serviceaccount',
    ]);
  });

  it("creates the sync role's access entry in the Kubernetes group infra/rbac.yaml binds", async () => {
    const manifests = await rbacManifests();
    const groups = manifests
      .flatMap((manifest) => (manifest.kind === 'ClusterRoleBinding' ? (manifest.subjects ?? []) : []))
      .filter((subject) => subject.kind === 'Group')
      .map((subject) => subject.name);

    expect(resourcesOfType(eksTemplate, 'AWS::EKS::AccessEntry')).toEqual(['SyncAccessEntry']);
    expect(properties(eksTemplate, 'SyncAccessEntry')).toEqual({
      ClusterName: CLUSTER_NAME,
      PrincipalArn: { 'Fn::GetAtt': ['SyncRole', 'Arn'] },
      KubernetesGroups: groups,
      Type: 'STANDARD',
    });
  });

  it('starts the schedule only once the access entry exists, so that no scheduled sync runs without access', () => {
    const [rule] = resourcesOfType(eksTemplate, 'AWS::Events::Rule');
    const metadata =
      (resource(eksTemplate, rule!) as { readonly Metadata?: Readonly<Record<string, unknown>> }).Metadata ?? {};

    expect(Object.values(metadata).map(renderExpression)).toContain('${SyncAccessEntry.AccessEntryArn}');
  });

  it('creates no access entry in kubeconfig mode, nor when createAccessEntry is false', () => {
    expect(resourcesOfType(kubeconfigTemplate, 'AWS::EKS::AccessEntry')).toEqual([]);
    expect(resourcesOfType(vpcTemplate, 'AWS::EKS::AccessEntry')).toEqual([]);
  });
});

describe('the template against AWS’s checkers (npm run check:template runs them)', () => {
  const templates = () => ({
    eks: eksTemplate,
    kubeconfig: kubeconfigTemplate,
    vpc: vpcTemplate,
    tuned: tunedTemplate,
  });

  it('keeps the deployment bucket private and versioned, its old versions expiring', () => {
    for (const [name, template] of Object.entries(templates())) {
      expect(properties(template, 'ServerlessDeploymentBucket'), name).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        VersioningConfiguration: { Status: 'Enabled' },
        LifecycleConfiguration: {
          Rules: [expect.objectContaining({ Status: 'Enabled', NoncurrentVersionExpiration: { NoncurrentDays: 30 } })],
        },
      });
    }
  });

  it('gives each checkov check it skips a reason, and docs/operations.md lists every check skipped', async () => {
    const skipped = new Map<string, string[]>();
    for (const [id, resource] of Object.entries(eksTemplate.Resources)) {
      const metadata = (resource as { Metadata?: { checkov?: { skip?: { id: string; comment: string }[] } } }).Metadata;
      for (const skip of metadata?.checkov?.skip ?? []) {
        expect(skip.comment.length, `${id} ${skip.id}`).toBeGreaterThan(40);
        skipped.set(skip.id, [...(skipped.get(skip.id) ?? []), id]);
      }
    }
    const docs = await readFile(join(ROOT, 'docs', 'operations.md'), 'utf8');
    const section = docs.slice(docs.indexOf("#### The template against AWS's checkers"), docs.indexOf('### 4. '));
    const listed = [...section.matchAll(/^ {2}\| (CKV_AWS_\d+),/gm)].map((match) => match[1]);

    expect(listed.sort()).toEqual([...skipped.keys()].sort());
  });
});
