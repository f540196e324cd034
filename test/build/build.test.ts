import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient } from '../../lib/store/index.ts';
import { admissionBundleProblems, buildFunctions, type FunctionBundle } from '../../scripts/build.ts';
import { fixtureText } from '../support/fixtures.ts';
import { parseAnswer } from '../support/reviews.ts';
import { admissionEvent, exampleContent, TOKEN } from '../endpoint/support.ts';
import { freshClusterId, snapshotsOf } from '../store/support.ts';
import { createFreshTable, startTestDynamo, type TestDynamo } from '../support/dynamo.ts';

// Invokes the bundle's handler as the Lambda runtime would: require it, call handler(event, context), print the result.
const INVOKE = `
const { handler } = require(process.argv[1]);
const event = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const context = { functionName: 'admission', functionVersion: '$LATEST', awsRequestId: 'req-1', memoryLimitInMB: '512',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:admission', getRemainingTimeInMillis: () => 10000 };
handler(event, context).then((result) => console.log('RESULT ' + JSON.stringify(result)));
`;

let outdir: string;
let bundles: FunctionBundle[];
let admission: FunctionBundle;

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'podmutation-build-'));
  bundles = await buildFunctions({ outdir });
  admission = bundles.find((bundle) => bundle.name === 'admission')!;
}, 60_000);

afterAll(async () => {
  await rm(outdir, { recursive: true, force: true });
});

describe('npm run build', () => {
  it('bundles the admission function into dist/admission/index.js', () => {
    expect(admission).toBeDefined();
    expect(admission.outfile).toBe(join(outdir, 'admission', 'index.js'));
    expect(admission.bytes).toBeGreaterThan(0);
  });

  it('leaves @kubernetes/client-node out of the admission bundle', () => {
    expect(admission.inputs.some((input) => input.includes('lib/engine/'))).toBe(true);
    expect(admission.inputs.filter((input) => input.includes('node_modules/@kubernetes/client-node/'))).toEqual([]);
  });

  it("leaves the SDK's event stream codec out of every function, for the shim that refuses it", () => {
    for (const bundle of bundles) {
      expect(bundle.inputs.filter((input) => input.includes('@smithy/core/dist-es/submodules/event-streams/'))).toEqual(
        [],
      );
      expect(bundle.inputs).toContain('functions/shims/event-streams.ts');
    }
  });

  it('refuses an event stream from the shim, naming it, rather than failing somewhere inside the SDK', async () => {
    const { EventStreamSerde, eventStreamSerdeProvider } = await import('../../functions/shims/event-streams.ts');

    expect(() => new EventStreamSerde()).toThrow(
      'event streams are not bundled into the functions (functions/shims/event-streams.ts)',
    );
    expect(() => eventStreamSerdeProvider()).toThrow('functions/shims/event-streams.ts');
  });

  it("compiles the CRD's descriptions and CEL rules out of the declaration the bundle carries", async () => {
    const text = await readFile(admission.outfile, 'utf8');
    expect(text).toContain('node-requirement-required');
    expect(text).not.toContain('Which Pods the rule applies to');
    expect(text).not.toContain('self.matchFields');
  });

  it('finds no problem with the admission bundle: no forbidden package, within 600 KB', () => {
    expect(admissionBundleProblems(admission)).toEqual([]);
  });

  it('writes no source map, which the Lambda runtime would not read', async () => {
    const files = await readdir(join(outdir, 'admission'));

    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(await readFile(admission.outfile, 'utf8')).not.toContain('sourceMappingURL');
  });

  it("names the project's functions in a stack trace from the minified bundle", async () => {
    // A function without its settings fails while its module loads: the trace CloudWatch would show.
    const child = spawn(process.execPath, [admission.outfile], { env: { PATH: process.env.PATH } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const [code] = (await once(child, 'exit')) as [number | null];
    const frames = stderr
      .split('\n')
      .filter((line) => line.trimStart().startsWith('at ') && line.includes(admission.outfile));

    expect(code).not.toBe(0);
    expect(stderr).toContain('RULES_TABLE is not set');
    expect(frames[0]).toMatch(/^\s+at readAll \(/);
    expect(frames).toContainEqual(expect.stringMatching(/^\s+at readAdmissionConfig \(/));
  });

  it('reports a bundle that contains the Kubernetes client', () => {
    const problems = admissionBundleProblems({
      ...admission,
      inputs: [...admission.inputs, 'node_modules/@kubernetes/client-node/dist/index.js'],
    });

    expect(problems).toEqual([expect.stringMatching(/^contains @kubernetes\/client-node \(1 files/)]);
  });

  describe('the built admission bundle', () => {
    let dynamo: TestDynamo;

    beforeAll(async () => {
      dynamo = await startTestDynamo();
    });

    afterAll(async () => {
      await dynamo.close();
    });

    it('loads in plain Node and answers a review through middy and Powertools, emitting EMF metrics', async () => {
      const tableName = await createFreshTable(dynamo.endpoint);
      const clusterId = freshClusterId();
      const client = createDynamoClient({ endpoint: dynamo.endpoint });
      await snapshotsOf({ client, tableName })(clusterId).publish(await exampleContent());
      client.destroy();
      const child = spawn(process.execPath, ['-e', INVOKE, admission.outfile], {
        env: {
          PATH: process.env.PATH,
          RULES_TABLE: tableName,
          CLUSTER_ID: clusterId,
          DYNAMODB_ENDPOINT: dynamo.endpoint,
          WEBHOOK_TOKEN: TOKEN,
          AWS_REGION: 'eu-west-1',
          POWERTOOLS_METRICS_NAMESPACE: 'podmutation-test',
          POWERTOOLS_SERVICE_NAME: 'admission',
        },
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stdin.end(JSON.stringify(admissionEvent({ body: fixtureText('reviews/deployment-legacy-pool.json') })));
      const [code] = (await once(child, 'exit')) as [number | null];

      const result = JSON.parse(
        /^RESULT (.*)$/m.exec(stdout)?.[1] ?? 'null',
      ) as APIGatewayProxyStructuredResultV2 | null;
      expect(code).toBe(0);
      expect(result).toMatchObject({ statusCode: 200 });
      expect(parseAnswer(result?.body ?? '').response.patchType).toBe('JSONPatch');
      expect(stdout).toMatch(/"message":"admission".*"function_request_id":"req-1"/);
      expect(stdout).toMatch(/"_aws":\{.*"Name":"Admissions"/);
    });
  });
});
