/**
 * Running a shipped function as Lambda would: its handler loaded from the unpacked artifact in a fresh Node process,
 * with the environment the template gives it, every AWS call sent (AWS_ENDPOINT_URL) through a loopback relay that
 * records the IAM action and the resource of each call before forwarding it to a local stand-in (dynalite for
 * DynamoDB, the test fake for EKS and Secrets Manager).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../support/processes.ts';
import { readBody } from '../support/http.ts';

/** One AWS call as IAM authorizes it: the action and the name the request gives its resource. */
interface AwsCall {
  readonly action: string;
  /** TableName, SecretId or EKS cluster name as sent. */
  readonly resource: string;
}

interface RecordingRelay {
  readonly url: string;
  readonly calls: readonly AwsCall[];
  close(): Promise<void>;
}

/** The result of one invocation and the lines the function printed (Powertools logs and EMF metrics). */
interface Invocation {
  /** What the handler returned, as JSON carries it. */
  readonly result: unknown;
  readonly lines: readonly string[];
}

/** A CloudWatch embedded-metric-format document: its metric directives, and dimension and metric values as members. */
interface EmbeddedMetricDocument {
  readonly _aws: {
    readonly Timestamp?: number;
    readonly CloudWatchMetrics: readonly {
      readonly Namespace: string;
      readonly Dimensions?: readonly (readonly string[])[];
      readonly Metrics: readonly { readonly Name: string; readonly Unit?: string }[];
    }[];
  };
  /** The service dimension Powertools adds to every metric. */
  readonly service?: string;
  readonly [member: string]: unknown;
}

interface InvokeOptions {
  /** The folder the artifact was unpacked into (Lambda's /var/task). */
  readonly taskRoot: string;
  /** The template's Handler, `<file without .js>.<export>`. */
  readonly handler: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly event: unknown;
  readonly functionName: string;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
}

/** The IAM action and resource of a request, by protocol: JSON 1.0/1.1 name theirs in X-Amz-Target, EKS is REST. */
function callOf(request: IncomingMessage, body: Buffer): AwsCall & { readonly service: 'dynamodb' | 'other' } {
  const target = request.headers['x-amz-target'];
  if (typeof target === 'string' && target.startsWith('DynamoDB_20120810.')) {
    const { TableName } = JSON.parse(body.toString('utf8')) as { TableName?: string };
    return {
      service: 'dynamodb',
      action: `dynamodb:${target.slice(target.indexOf('.') + 1)}`,
      resource: String(TableName),
    };
  }
  if (typeof target === 'string' && target.startsWith('secretsmanager.')) {
    const { SecretId } = JSON.parse(body.toString('utf8')) as { SecretId?: string };
    return {
      service: 'other',
      action: `secretsmanager:${target.slice(target.indexOf('.') + 1)}`,
      resource: String(SecretId),
    };
  }
  const cluster = /^\/clusters\/([^/?]+)$/.exec(request.url ?? '');
  if (request.method === 'GET' && cluster?.[1] !== undefined) {
    return { service: 'other', action: 'eks:DescribeCluster', resource: decodeURIComponent(cluster[1]) };
  }
  return { service: 'other', action: `unknown:${request.method} ${request.url} ${String(target)}`, resource: '' };
}

function forward(backend: string, request: IncomingMessage, body: Buffer, response: ServerResponse): void {
  const target = new URL(request.url ?? '/', backend);
  const upstream = httpRequest(
    target,
    { method: request.method, headers: { ...request.headers, host: target.host } },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  upstream.on('error', (error) => response.destroy(error));
  upstream.end(body);
}

/** Starts the relay on 127.0.0.1: DynamoDB calls go to `dynamodb`, every other call to `other`. */
async function startRecordingRelay(backends: {
  readonly dynamodb: string;
  readonly other: string;
}): Promise<RecordingRelay> {
  const calls: AwsCall[] = [];
  const server = createServer((request, response) => {
    readBody(request).then(
      (body) => {
        const { service, action, resource } = callOf(request, body);
        calls.push({ action, resource });
        forward(service === 'dynamodb' ? backends.dynamodb : backends.other, request, body, response);
      },
      (error: Error) => response.destroy(error),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Loads the handler as the Node.js runtime does (module file and export from the Handler setting), invokes it
// once with a Lambda-shaped context, writes the result to a file and exits without waiting for idle sockets.
const RUNNER = `
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const [taskRoot, handlerSetting, eventJson, contextJson, resultFile] = process.argv.slice(2);
const dot = handlerSetting.lastIndexOf('.');
const handler = require(join(taskRoot, handlerSetting.slice(0, dot) + '.js'))[handlerSetting.slice(dot + 1)];
const base = JSON.parse(contextJson);
const deadline = Date.now() + base.timeoutMs;
const context = { ...base, getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
Promise.resolve(handler(JSON.parse(eventJson), context)).then(
  (result) => { writeFileSync(resultFile, JSON.stringify(result ?? null)); process.exit(0); },
  (error) => { console.error(error); process.exit(1); },
);
`;

/** Invokes a shipped handler once in a fresh process; fails with the process output when it does not answer. */
async function invokeShippedHandler(options: InvokeOptions): Promise<Invocation> {
  const scratch = await mkdtemp(join(tmpdir(), 'podmutation-invoke-'));
  try {
    const runner = join(scratch, 'runner.cjs');
    const resultFile = join(scratch, 'result.json');
    await writeFile(runner, RUNNER);
    const context = {
      functionName: options.functionName,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${options.functionName}`,
      memoryLimitInMB: String(options.memorySize),
      awsRequestId: '5e1f0c7a-0000-4000-8000-000000000001',
      logGroupName: `/aws/lambda/${options.functionName}`,
      logStreamName: '2026/12/01/[$LATEST]0123456789abcdef',
      callbackWaitsForEmptyEventLoop: true,
      timeoutMs: options.timeoutSeconds * 1000,
    };
    const args = [
      runner,
      options.taskRoot,
      options.handler,
      JSON.stringify(options.event),
      JSON.stringify(context),
      resultFile,
    ];
    const output = await runProcess(process.execPath, args, { cwd: options.taskRoot, env: { ...options.environment } });
    if (output.code !== 0) {
      throw new Error(`${options.functionName} exited with ${output.code}:\n${output.stdout}\n${output.stderr}`);
    }
    return {
      result: JSON.parse(await readFile(resultFile, 'utf8')),
      lines: output.stdout.split('\n').filter((line) => line !== ''),
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Whether a parsed line is an embedded-metric-format document: one with _aws.CloudWatchMetrics. */
function isEmbeddedMetricDocument(value: unknown): value is EmbeddedMetricDocument {
  return (
    (value as { readonly _aws?: { readonly CloudWatchMetrics?: unknown } } | null)?._aws?.CloudWatchMetrics !==
    undefined
  );
}

/** The CloudWatch embedded-metric-format documents among printed lines. */
function embeddedMetrics(lines: readonly string[]): EmbeddedMetricDocument[] {
  return lines.flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      const document: unknown = JSON.parse(line);
      return isEmbeddedMetricDocument(document) ? [document] : [];
    } catch {
      return [];
    }
  });
}

export { startRecordingRelay, invokeShippedHandler, embeddedMetrics };
export type { AwsCall, RecordingRelay, Invocation, InvokeOptions, EmbeddedMetricDocument };
