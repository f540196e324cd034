/**
 * What the admission Lambda's handler costs per admission, in process: the shipped bundle (dist/admission) loaded
 * once as in a warm container, over an embedded DynamoDB holding the same rules as `podmutation serve`, called with
 * the AdmissionReview of the bench's Pod as API Gateway would pass it. Run in a child process whose stdout (the
 * Powertools log line and metrics of each call) goes to /dev/null, so printing none of it is what it costs here.
 *
 * As a script (by lambdaHandlerCost): BUNDLE REVIEW_FILE RULES_DIR CALLS; prints one JSON line on stderr.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { generateToken } from '../../lib/endpoint/index.ts';
import { createFileRuleSource } from '../../lib/local-server/index.ts';
import { toHttpApiEvent } from '../../lib/local-server/event.ts';
import { generateStampKey } from '../../lib/stamp/index.ts';
import { createDynamoClient, createSnapshotTable, openRulesTable } from '../../lib/store/index.ts';
import { startEmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import {
  admissionBundle,
  lambdaContext,
  runtimeEnvironment,
  TEST_FUNCTION_ENVIRONMENT,
} from '../../test/real-cluster/lambda-host.ts';
import { buildFunctions } from '../build.ts';
import { median } from '../measure.ts';

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TABLE = 'podmutation-rules';
const CLUSTER_ID = 'default';
const WARM_UP_CALLS = 300;

/** Per admission: wall time (median and mean) and CPU, in milliseconds. */
export interface HandlerCost {
  readonly calls: number;
  readonly medianMs: number;
  readonly meanMs: number;
  readonly cpuMs: number;
}

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** The child: publishes the rules, loads the bundle with the function's environment, calls it, prints the figures. */
async function measureInChild(bundle: string, reviewFile: string, rules: string, calls: number): Promise<HandlerCost> {
  const dynamo = await startEmbeddedDynamo();
  const client = createDynamoClient({ endpoint: dynamo.endpoint });
  await createSnapshotTable(client, TABLE);
  await createFileRuleSource([rules]).publishRules(
    openRulesTable({ client, tableName: TABLE, clusterId: CLUSTER_ID }),
    CLUSTER_ID,
  );
  const token = generateToken();
  Object.assign(process.env, runtimeEnvironment('eu-west-1'), TEST_FUNCTION_ENVIRONMENT, {
    RULES_TABLE: TABLE,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    CLUSTER_ID,
    WEBHOOK_TOKEN: token,
    STAMP_KEY: generateStampKey(),
  });
  const { handler } = (await import(pathToFileURL(bundle).href)) as { handler: Handler };
  const head = {
    method: 'POST',
    url: `/admit/${token}`,
    httpVersion: '1.1',
    headers: { 'content-type': 'application/json', host: 'bench.execute-api.eu-west-1.amazonaws.com' },
    sourceIp: '127.0.0.1',
  };
  const event = toHttpApiEvent(head, readFileSync(reviewFile), new Date());
  const call = async (): Promise<void> => {
    const result = await handler(event, lambdaContext());
    if (result.statusCode !== 200 || !String(result.body).includes('"patch"'))
      throw new Error(
        `the admission handler answered ${result.statusCode} without a patch: ${String(result.body).slice(0, 300)}`,
      );
  };
  for (let index = 0; index < WARM_UP_CALLS; index += 1) await call();
  const wall: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let index = 0; index < calls; index += 1) {
    const started = performance.now();
    await call();
    wall.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpuBefore);
  await dynamo.close();
  return {
    calls,
    medianMs: median(wall),
    meanMs: wall.reduce((sum, value) => sum + value, 0) / calls,
    cpuMs: (cpu.user + cpu.system) / 1000 / calls,
  };
}

/** Builds the admission bundle and measures its handler on `review` (an AdmissionReview) in a child process. */
export async function lambdaHandlerCost(review: unknown, calls = 3000): Promise<HandlerCost> {
  const scratch = await mkdtemp(join(tmpdir(), 'podmutation-lambda-cost-'));
  const bundle = admissionBundle(await buildFunctions({ outdir: join(scratch, 'dist') }));
  const reviewFile = join(scratch, 'review.json');
  await writeFile(reviewFile, JSON.stringify(review));
  const args = ['--import', 'tsx', SELF, bundle, reviewFile, join(ROOT, 'examples', 'rules'), String(calls)];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stderr.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) resolvePromise(JSON.parse(line) as HandlerCost);
      else reject(new Error(`the Lambda handler measurement exited ${code}: ${stderr.slice(-2000)}`));
    });
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === SELF) {
  const [bundle, reviewFile, rules, calls] = process.argv.slice(2) as [string, string, string, string];
  const cost = await measureInChild(bundle, reviewFile, rules, Number(calls));
  process.stderr.write(`${JSON.stringify(cost)}\n`);
}
