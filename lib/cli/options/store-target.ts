/** TARGET, the rules table `sync` and `placement` write to: flags, the stack lookup, and a client for it. */
import type { DescribeStacksCommand, DescribeStacksCommandOutput, Output } from '@aws-sdk/client-cloudformation';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Option } from 'commander';
import { ConfigurationError, MalformedInputError } from '../../errors/index.ts';
import { previewInput, readAll } from '../../json/index.ts';
import {
  AWS_REGION,
  CLOUDFORMATION_STACK_NAME,
  CLUSTER_ID,
  isHttpUrl,
  SERVERLESS_STAGE,
  TABLE_NAME,
  type ValueRule,
} from '../../syntax/index.ts';

// Only a local DynamoDB (--dynamodb-endpoint) gets defaults: it starts empty and belongs to nobody else.
const LOCAL_TABLE = 'podmutation-rules';
const LOCAL_CLUSTER_ID = 'default';
// The service of serverless.yml; the Serverless Framework names the stack <service>-<stage>.
const DEFAULT_SERVICE = 'podmutation';
// The stack outputs serverless.yml declares for the CLI.
const TABLE_OUTPUT = 'RulesTableName';
const CLUSTER_ID_OUTPUT = 'ClusterId';

/** The flags naming a rules table, as commander parses them. */
export interface StoreFlags {
  readonly stage?: string;
  readonly service?: string;
  readonly table?: string;
  readonly clusterId?: string;
  readonly dynamodbEndpoint?: string;
  readonly region?: string;
}

/** What TARGET means in the help of `sync` and `placement`: the flags that name the rules table. */
export const TARGET_DEFINITION =
  'TARGET is the rules table: --stage STAGE (the deployed stack SERVICE-STAGE names it and the cluster id), --table NAME ' +
  'with --cluster-id ID, or --dynamodb-endpoint URL (a local DynamoDB); there is no default in AWS.';

/** The TARGET options of `sync` and `placement`; there is no default table in AWS. */
export function storeTargetOptions(): Option[] {
  const group = 'Target (the rules table; there is no default in AWS):';
  return [
    new Option(
      '--stage <stage>',
      'the deployed stage: the table and cluster id come from the outputs of the stack SERVICE-STAGE',
    ).helpGroup(group),
    new Option('--service <name>', 'the service that names the stack with --stage')
      .default(undefined, DEFAULT_SERVICE)
      .helpGroup(group),
    new Option('--table <name>', 'a rules table given directly (with --cluster-id)').helpGroup(group),
    new Option('--cluster-id <id>', 'the cluster id within the table (with --table)').helpGroup(group),
    new Option(
      '--dynamodb-endpoint <url>',
      `a local DynamoDB (dynalite, DynamoDB Local); the table defaults to ${LOCAL_TABLE}, the cluster id to ${LOCAL_CLUSTER_ID}, and the table is created`,
    ).helpGroup(group),
    new Option('--region <region>', "the AWS region (default: the SDK's)").helpGroup(group),
  ];
}

/** Where the rules table is: its name, endpoint and region, and the cluster id within it. */
export interface StoreTarget {
  readonly tableName: string;
  readonly clusterId: string;
  readonly endpoint?: string;
  readonly region?: string;
}

/** The one CloudFormation call the lookup makes; satisfied by CloudFormationClient. */
interface StackReader {
  send(command: DescribeStacksCommand): Promise<DescribeStacksCommandOutput>;
}

// The forms readStoreConfig accepts for RULES_TABLE and CLUSTER_ID, checked here to name the flag.
function checked(value: string, rule: ValueRule, flag: string): string {
  if (!rule.pattern.test(value))
    throw new MalformedInputError(`--${flag} is "${value}"; expected ${rule.form}`, { context: { flag: `--${flag}` } });
  return value;
}

function checkedEndpoint(value: string): string {
  if (!isHttpUrl(value)) {
    throw new MalformedInputError(`--dynamodb-endpoint is "${value}"; expected an http:// or https:// URL`, {
      context: { flag: '--dynamodb-endpoint' },
    });
  }
  return value;
}

function optional(value: string | undefined, check: (value: string) => string): string | undefined {
  return value === undefined ? undefined : check(value);
}

/** The store flags, each checked; one error names every wrong flag. */
function storeFlags(flags: StoreFlags) {
  return readAll(
    {
      stage: () => optional(flags.stage, (value) => checked(value, SERVERLESS_STAGE, 'stage')),
      service: () => optional(flags.service, (value) => checked(value, SERVERLESS_STAGE, 'service')),
      tableName: () => optional(flags.table, (value) => checked(value, TABLE_NAME, 'table')),
      clusterId: () => optional(flags.clusterId, (value) => checked(value, CLUSTER_ID, 'cluster-id')),
      endpoint: () => optional(flags.dynamodbEndpoint, checkedEndpoint),
      region: () => optional(flags.region, (value) => checked(value, AWS_REGION, 'region')),
    },
    MalformedInputError,
  );
}

/**
 * Checks the store flags and says where they point, without the network: a local DynamoDB (with defaults), an
 * explicit table and cluster id, or a deployed stage whose stack outputs name them. There is no default for AWS: a
 * write without a target would go to a table the deployed admission never reads.
 */
export function storeTarget(flags: StoreFlags): StoreTarget | { readonly stack: string; readonly region?: string } {
  const { stage, service, tableName, clusterId, endpoint, region } = storeFlags(flags);
  const regionPart = region === undefined ? {} : { region };
  if (stage !== undefined) {
    const given = [tableName && '--table', clusterId && '--cluster-id', endpoint && '--dynamodb-endpoint'].filter(
      Boolean,
    );
    if (given.length > 0) {
      throw new MalformedInputError(
        `--stage reads the table and cluster id from the deployed stack; leave out ${given.join(', ')}`,
        { context: { flag: '--stage' } },
      );
    }
    const stack = `${service ?? DEFAULT_SERVICE}-${stage}`;
    if (!CLOUDFORMATION_STACK_NAME.pattern.test(stack)) {
      throw new MalformedInputError(
        `--service and --stage make the stack name "${stack}"; expected ${CLOUDFORMATION_STACK_NAME.form}`,
        { context: { flag: '--stage' } },
      );
    }
    return { stack, ...regionPart };
  }
  if (service !== undefined)
    throw new MalformedInputError('--service names the stack together with --stage; give --stage too', {
      context: { flag: '--service' },
    });
  if (endpoint !== undefined)
    return { tableName: tableName ?? LOCAL_TABLE, clusterId: clusterId ?? LOCAL_CLUSTER_ID, endpoint, ...regionPart };
  if (tableName === undefined || clusterId === undefined) {
    throw new MalformedInputError(
      'say which deployment to use: --stage S (and --region R) to read the table and cluster id from the stack podmutation-S, or both --table and --cluster-id; ' +
        'without --dynamodb-endpoint there is no default table, so nothing is written where admission does not read',
      { context: { flag: tableName === undefined ? '--table' : '--cluster-id' } },
    );
  }
  return { tableName, clusterId, ...regionPart };
}

/** The output's value, checked against its rule: outputs are read from AWS and trusted no more than a flag. */
function outputValue(outputs: readonly Output[], key: string, rule: ValueRule, stack: string): string {
  const value = outputs.find((output) => output.OutputKey === key)?.OutputValue;
  if (value === undefined) {
    throw new ConfigurationError(
      `stack ${stack} has no output ${key}; deploy the current serverless.yml, or give --table and --cluster-id instead of --stage`,
      { context: { stack, output: key } },
    );
  }
  if (!rule.pattern.test(value)) {
    throw new ConfigurationError(`output ${key} of stack ${stack} is ${previewInput(value)}; expected ${rule.form}`, {
      context: { stack, output: key },
    });
  }
  return value;
}

/**
 * The store target of the flags: for --stage, the table and cluster id from the stack's outputs (DescribeStacks in
 * --region, else the SDK's region). Throws MalformedInputError for the flags, ConfigurationError naming the stack
 * and region when it cannot be read.
 */
export async function resolveStoreTarget(
  flags: StoreFlags,
  options: { readonly stacks?: StackReader } = {},
): Promise<StoreTarget> {
  const target = storeTarget(flags);
  if (!('stack' in target)) return target;
  const { stack, region } = target;
  // Loaded on use: the SDK client would slow the start of every command.
  const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  const owned =
    options.stacks === undefined ? new CloudFormationClient(region === undefined ? {} : { region }) : undefined;
  const client: StackReader = options.stacks ?? owned!;
  let outputs: readonly Output[];
  try {
    const described = await client.send(new DescribeStacksCommand({ StackName: stack }));
    outputs = described.Stacks?.[0]?.Outputs ?? [];
  } catch (error) {
    const where = region === undefined ? "in the SDK's default region (give --region R)" : `in ${region}`;
    throw new ConfigurationError(`reading stack ${stack} ${where} failed: ${(error as Error).message}`, {
      cause: error,
      context: { stack },
    });
  } finally {
    owned?.destroy();
  }
  return {
    tableName: outputValue(outputs, TABLE_OUTPUT, TABLE_NAME, stack),
    clusterId: outputValue(outputs, CLUSTER_ID_OUTPUT, CLUSTER_ID, stack),
    ...(region === undefined ? {} : { region }),
  };
}

/**
 * A DynamoDB client for the target. A local DynamoDB (an explicit endpoint) starts empty, so the table is created
 * there; in AWS the table belongs to the deployed stack and is never created here.
 */
export async function targetClient(target: StoreTarget): Promise<DynamoDBClient> {
  const { createDynamoClient, createSnapshotTable } = await import('../../store/index.ts');
  const client = createDynamoClient({
    ...(target.endpoint === undefined ? {} : { endpoint: target.endpoint }),
    ...(target.region === undefined ? {} : { region: target.region }),
  });
  if (target.endpoint !== undefined) {
    try {
      await createSnapshotTable(client, target.tableName);
    } catch (error) {
      client.destroy();
      throw error;
    }
  }
  return client;
}
