import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveStoreTarget, storeTarget } from '../../lib/cli/options/store-target.ts';
import { ConfigurationError, MalformedInputError } from '../../lib/errors/index.ts';
import { placementsOf } from '../store/support.ts';
import { startFakeCloudFormation } from './fake-cloudformation.ts';
import { useTestTable } from '../support/dynamo.ts';

const BIN = fileURLToPath(new URL('../../bin/podmutation.mjs', import.meta.url));

describe('storeTarget: where the flags point, before any network call', () => {
  it.each([
    {
      flags: { dynamodbEndpoint: 'http://127.0.0.1:8000' },
      target: { tableName: 'podmutation-rules', clusterId: 'default', endpoint: 'http://127.0.0.1:8000' },
    },
    {
      flags: { table: 'rules-abc', clusterId: 'prod-eks', region: 'eu-west-1' },
      target: { tableName: 'rules-abc', clusterId: 'prod-eks', region: 'eu-west-1' },
    },
    { flags: { stage: 'prod', region: 'eu-west-1' }, target: { stack: 'podmutation-prod', region: 'eu-west-1' } },
    { flags: { stage: 'prod', service: 'pm-edge' }, target: { stack: 'pm-edge-prod' } },
  ])('reads $flags', ({ flags, target }) => {
    expect(storeTarget(flags)).toEqual(target);
  });

  it.each([
    { flags: {}, message: /say which deployment to use: --stage S .* or both --table and --cluster-id/ },
    { flags: { table: 'rules-abc' }, message: /say which deployment to use/ },
    { flags: { clusterId: 'prod-eks' }, message: /say which deployment to use/ },
    {
      flags: { stage: 'prod', table: 'rules-abc' },
      message: /--stage reads the table and cluster id from the deployed stack; leave out --table/,
    },
    { flags: { stage: 'prod', dynamodbEndpoint: 'http://127.0.0.1:8000' }, message: /leave out --dynamodb-endpoint/ },
    {
      flags: { service: 'pm-edge', table: 'a-b-c', clusterId: 'x' },
      message: /--service names the stack together with --stage/,
    },
    { flags: { stage: 'prod_1' }, message: /--stage is "prod_1"; expected 1 to 64 letters, digits or "-"/ },
  ])('refuses $flags, writing nowhere by default', ({ flags, message }) => {
    expect(() => storeTarget(flags)).toThrow(MalformedInputError);
    expect(() => storeTarget(flags)).toThrow(message);
  });
});

describe("resolveStoreTarget: the deployed stack's outputs", () => {
  let fake: Awaited<ReturnType<typeof startFakeCloudFormation>>;
  beforeAll(async () => {
    fake = await startFakeCloudFormation(
      new Map<string, Readonly<Record<string, string>>>([
        [
          'podmutation-prod',
          { RulesTableName: 'podmutation-prod-RulesTable-1A2B3C', ClusterId: 'prod-eks', WebhookBaseUrl: 'https://x' },
        ],
        ['podmutation-old', { RulesTableName: 'podmutation-old-RulesTable-9Z' }],
        ['podmutation-odd', { RulesTableName: 'has spaces', ClusterId: 'prod-eks' }],
      ]),
    );
  });
  afterAll(() => fake.close());

  it('finds the table and the cluster id in the stack <service>-<stage>', async () => {
    await expect(
      resolveStoreTarget({ stage: 'prod', region: 'eu-west-1' }, { stacks: fake.client() }),
    ).resolves.toEqual({
      tableName: 'podmutation-prod-RulesTable-1A2B3C',
      clusterId: 'prod-eks',
      region: 'eu-west-1',
    });
    expect(fake.requested()).toContain('DescribeStacks podmutation-prod');
  });

  it('names the stack and the region when the stack does not exist', async () => {
    const resolving = resolveStoreTarget({ stage: 'qa', region: 'eu-west-1' }, { stacks: fake.client() });

    await expect(resolving).rejects.toThrow(ConfigurationError);
    await expect(resolving).rejects.toThrow(
      'reading stack podmutation-qa in eu-west-1 failed: Stack with id podmutation-qa does not exist',
    );
  });

  it('says which output is missing from a stack deployed before the ClusterId output', async () => {
    await expect(resolveStoreTarget({ stage: 'old' }, { stacks: fake.client() })).rejects.toThrow(
      'stack podmutation-old has no output ClusterId; deploy the current serverless.yml, or give --table and --cluster-id instead of --stage',
    );
  });

  it('checks an output value like a flag', async () => {
    await expect(resolveStoreTarget({ stage: 'odd' }, { stacks: fake.client() })).rejects.toThrow(
      /output RulesTableName of stack podmutation-odd is "has spaces"; expected a DynamoDB table name/,
    );
  });
});

describe('podmutation placement --stage, the binary', () => {
  const table = useTestTable();
  let fake: Awaited<ReturnType<typeof startFakeCloudFormation>>;
  beforeAll(async () => {
    fake = await startFakeCloudFormation(
      new Map([['podmutation-prod', { RulesTableName: table.tableName, ClusterId: 'prod-eks' }]]),
    );
  });
  afterAll(async () => {
    await fake.close();
  });

  function run(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
    const env = {
      ...process.env,
      AWS_ENDPOINT_URL_CLOUDFORMATION: fake.url,
      AWS_ENDPOINT_URL_DYNAMODB: table.endpoint,
      AWS_ACCESS_KEY_ID: 'AKIDTEST',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], { env });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });
  }

  const SET = ['placement', 'set', '--namespace', 'apps', '--kind', 'Deployment', '--name', 'web', '--mode', 'Spot'];

  it("writes the policy to the stack's table under its cluster id", async () => {
    const result = await run([...SET, '--stage', 'prod', '--region', 'eu-west-1']);

    expect(result).toMatchObject({ code: 0 });
    await expect(
      placementsOf({ client: table.client, tableName: table.tableName })('prod-eks').listPlacements(),
    ).resolves.toEqual([{ namespace: 'apps', kind: 'Deployment', name: 'web', mode: 'Spot' }]);
  });

  it('refuses to write without a target instead of writing to a default table', async () => {
    const result = await run([...SET, '--region', 'eu-west-1']);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('say which deployment to use');
    await expect(
      placementsOf({ client: table.client, tableName: table.tableName })('default').listPlacements(),
    ).resolves.toEqual([]);
  });
});
