/**
 * The local profile of `osls offline` (started by serverless/plugin.mjs): serverless-offline serves the functions that
 * have an HTTP API route, against an embedded DynamoDB holding a snapshot of the rule files, and every CloudFormation
 * reference in their environment is replaced by its local stand-in before serverless-offline reads it. A reference
 * without a stand-in stops the start: a function never runs with "[object Object]" for a setting, nor with a default
 * that would reach AWS (DYNAMODB_ENDPOINT always points at the embedded store).
 */
import { resolve } from 'node:path';
import { describeIssues } from '../lib/api/index.ts';
import { checkedToken, generateToken } from '../lib/endpoint/index.ts';
import { generateStampKey } from '../lib/stamp/index.ts';
import { createFileRuleSource } from '../lib/local-server/index.ts';
import { startEmbeddedDynamo } from '../lib/store/embedded/index.ts';
import { createDynamoClient, createSnapshotTable, openRulesTable } from '../lib/store/index.ts';

/** A function of the service as osls resolved it: what the profile reads, and the environment it rewrites. */
interface ServiceFunction {
  readonly handler?: string;
  /** The Lambda name osls gave it, by which serverless-offline's Lambda port invokes it. */
  readonly name?: string;
  environment?: Record<string, unknown>;
  readonly events?: readonly Readonly<Record<string, unknown>>[];
}

/** The service osls resolved (serverless.service), changed in place before serverless-offline reads it. */
interface OfflineService {
  readonly provider: { environment?: Record<string, unknown> };
  readonly functions: Record<string, ServiceFunction>;
}

/** custom.localProfile of serverless.yml, as resolved from the parameters. */
interface LocalProfileSettings {
  /** Rule files or folders, comma-separated, relative to the service folder; empty publishes no snapshot. */
  readonly rules?: unknown;
  /** The webhook path token; empty generates one. */
  readonly token?: unknown;
  /** The embedded table's name. */
  readonly tableName?: unknown;
}

/** What the plugin hands the profile. */
interface LocalProfileOptions {
  readonly service: OfflineService;
  readonly serviceDir: string;
  readonly settings: LocalProfileSettings;
  /** Where serverless-offline serves the HTTP API, for the webhook URL printed. */
  readonly baseUrl: string;
  /** Where serverless-offline's Lambda API answers `aws lambda invoke` (its --lambdaPort), for the line that says so. */
  readonly lambdaUrl: string;
  readonly report: (line: string) => void;
}

/** The running profile: the embedded store and the token the served functions were given. */
interface LocalProfile {
  readonly endpoint: string;
  readonly tableName: string;
  readonly token: string;
  /** Stops the embedded DynamoDB; idempotent. */
  close(): Promise<void>;
}

/** The local values stand-ins are made of. */
interface LocalValues {
  readonly endpoint: string;
  readonly tableName: string;
  readonly token: string;
}

const DEFAULT_TABLE_NAME = 'podmutation-local';
// The local-only function of the catch-all route.
const NOT_FOUND_FUNCTION = 'localNotFound';
// Its Lambda name: one osls never gave it (it is added after osls named the service's functions).
const NOT_FOUND_NAME = 'podmutation-local-not-found';
const DEFAULT_CLUSTER_ID = 'default';

// What each CloudFormation reference of the environment becomes locally: the variables that replace the one holding it.
const STAND_INS: Readonly<Record<string, (variable: string, local: LocalValues) => Readonly<Record<string, string>>>> =
  {
    // The table the stack creates: the embedded one, at its endpoint.
    RulesTable: (variable, local) => ({ [variable]: local.tableName, DYNAMODB_ENDPOINT: local.endpoint }),
    // The token's secret: the token itself (WEBHOOK_TOKEN), and no secret to read.
    WebhookTokenSecret: (_variable, local) => ({ WEBHOOK_TOKEN: local.token }),
    // The stamp key's secret: a key generated for this run (STAMP_KEY).
    StampKeySecret: () => ({ STAMP_KEY: generateStampKey() }),
  };

/** A setting of custom.localProfile as text; an absent or empty one is the fallback. */
function setting(settings: LocalProfileSettings, name: keyof LocalProfileSettings, fallback: string): string {
  const value = settings[name];
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  throw new Error(`custom.localProfile.${name} is ${JSON.stringify(value)}; expected a string`);
}

function isServed(fn: ServiceFunction): boolean {
  return (fn.events ?? []).some((event) => event['httpApi'] !== undefined);
}

/** The reference a value is, `{Ref: X}`, or undefined. */
function referenceOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  const [only] = entries;
  return entries.length === 1 && only !== undefined && only[0] === 'Ref' && typeof only[1] === 'string'
    ? only[1]
    : undefined;
}

/** A function's environment with every reference stood in for; throws naming each value that has no stand-in. */
function localEnvironment(
  key: string,
  environment: Readonly<Record<string, unknown>>,
  local: LocalValues,
): Record<string, string> {
  const result: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(environment)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      result[name] = String(value);
      continue;
    }
    const reference = referenceOf(value);
    const standIn = reference === undefined ? undefined : STAND_INS[reference];
    if (standIn === undefined) {
      problems.push(`${key}: ${name} is ${JSON.stringify(value)}, a CloudFormation expression with no local stand-in`);
      continue;
    }
    Object.assign(result, standIn(name, local));
  }
  if (problems.length > 0) throw new Error(`the local profile cannot serve ${problems.join('; ')}`);
  // Whatever the environment says, the SDK's default endpoint (AWS) is never the store of a local function.
  return { ...result, DYNAMODB_ENDPOINT: local.endpoint };
}

/**
 * Starts the local profile: the embedded DynamoDB with the rules table, a snapshot of the rule files published for
 * each served function's CLUSTER_ID, the served functions' environment rewritten, the others left out. Reports the
 * webhook URL. Rejects, leaving nothing running, when the rules cannot be read or an environment has no stand-in.
 */
async function startLocalProfile(options: LocalProfileOptions): Promise<LocalProfile> {
  const { service, settings, report } = options;
  const tableName = setting(settings, 'tableName', DEFAULT_TABLE_NAME);
  const givenToken = setting(settings, 'token', '');
  const token = givenToken === '' ? generateToken() : checkedToken(givenToken, 'the localToken parameter');
  const rulePaths = setting(settings, 'rules', '')
    .split(',')
    .map((path) => path.trim())
    .filter((path) => path !== '');

  const dynamo = await startEmbeddedDynamo();
  const client = createDynamoClient({ endpoint: dynamo.endpoint });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      client.destroy();
      await dynamo.close();
    })());
  try {
    const local: LocalValues = { endpoint: dynamo.endpoint, tableName, token };
    const served = Object.entries(service.functions).filter(([, fn]) => isServed(fn));
    const environments = served.map(
      ([key, fn]) =>
        [key, localEnvironment(key, { ...service.provider.environment, ...fn.environment }, local)] as const,
    );
    await createSnapshotTable(client, tableName);
    const clusterIds = [
      ...new Set(environments.map(([, environment]) => environment['CLUSTER_ID'] ?? DEFAULT_CLUSTER_ID)),
    ];
    if (rulePaths.length > 0) {
      const source = createFileRuleSource(rulePaths.map((path) => resolve(options.serviceDir, path)));
      for (const clusterId of clusterIds) {
        const table = openRulesTable({ client, tableName, clusterId });
        const publication = await source.publishRules(table, clusterId);
        for (const invalid of publication.invalid)
          for (const line of describeIssues(invalid)) report(`invalid rule skipped: ${line}`);
        report(
          `published snapshot version ${publication.outcome.version} of ${rulePaths.join(', ')} for cluster ${clusterId} (${publication.rules} valid, ${publication.invalid.length} invalid)`,
        );
      }
    }

    service.provider.environment = {};
    for (const [key, environment] of environments) service.functions[key]!.environment = environment;
    for (const [key, fn] of Object.entries(service.functions)) {
      if (!isServed(fn)) {
        delete service.functions[key];
        report(`${key}: not served locally (no HTTP API route; it reads the cluster through AWS)`);
      }
    }
    // Any other path gets API Gateway's own 404 body: serverless-offline's would echo the path, and so a token.
    const invocable = Object.values(service.functions).flatMap((fn) => (fn.name === undefined ? [] : [fn.name]));
    service.functions[NOT_FOUND_FUNCTION] = {
      handler: 'serverless/not-found.handler',
      name: NOT_FOUND_NAME,
      events: [{ httpApi: '*' }],
    };
    // serverless-offline lists each function's invocations route under the HTTP API's address, where it is not served.
    report(
      `aws lambda invoke reaches ${invocable.join(', ')} by name at ${options.lambdaUrl} ` +
        `(POST ${options.lambdaUrl}/2015-03-31/functions/NAME/invocations); the invocations routes listed below under ` +
        `${options.baseUrl} answer 404`,
    );
    report(`embedded DynamoDB ${dynamo.endpoint}, table ${tableName}; the served functions reach no AWS service`);
    report(
      `publish a cluster's rules into it: npx podmutation sync --once --kubeconfig FILE --dynamodb-endpoint ${dynamo.endpoint} ` +
        `--table ${tableName} --cluster-id ${clusterIds[0] ?? DEFAULT_CLUSTER_ID}`,
    );
    report(`webhook URL (clientConfig.url of a MutatingWebhookConfiguration): ${options.baseUrl}/admit/${token}`);
    return { endpoint: dynamo.endpoint, tableName, token, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export { startLocalProfile };
export type { LocalProfile, LocalProfileOptions, LocalProfileSettings, OfflineService, ServiceFunction };
