/**
 * The shipped admission bundle (dist/admission/index.js) as one warm Lambda container behind API Gateway: a child
 * process loads the bundle once with the function's environment (its init phase), then serves HTTPS, turning each
 * request into the HTTP API payload 2.0 event API Gateway would send (lib/local-server/event.ts) and writing the
 * handler's result back. One invocation runs at a time, as in one Lambda execution environment. Every request is
 * logged with a fingerprint of its path token and the status answered, so a test can see which token the API server
 * presented and when it switched.
 *
 * Run as a script (by startLambdaHost): --bundle FILE --port N --cert FILE --key FILE --request-log FILE.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type ServerOptions } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { isAdmissionRoute, requestHead, toHttpApiEvent, writeHttpApiResult } from '../../lib/local-server/event.ts';
import type { KeyPair } from './certificates.ts';
import { freePort, startSupervised, waitFor, type Supervised } from './processes.ts';
import { readBody } from '../support/http.ts';

/** One request the host answered, as its request log records it. */
interface HostRequest {
  /** Epoch milliseconds when it arrived. */
  readonly at: number;
  /** tokenFingerprint of the path token, or "" when the route carried none. */
  readonly token: string;
  readonly status: number;
}

/** A running host. */
interface LambdaHost {
  /** https://127.0.0.1:PORT, what webhook-config takes as --url. */
  readonly baseUrl: string;
  readonly process: Supervised;
  /** The requests answered so far, in order. */
  requests(): Promise<HostRequest[]>;
  stop(): Promise<void>;
}

interface LambdaHostOptions {
  /** The built admission bundle (buildFunctions' outfile). */
  readonly bundle: string;
  /** The function's environment (RULES_TABLE, WEBHOOK_TOKEN_SECRET_ARN, ...); the runtime's own variables are added. */
  readonly environment: Readonly<Record<string, string>>;
  /** The serving certificate (certificates.ts servingCertificate of the cluster CA). */
  readonly certificate: KeyPair;
  /** A folder for its certificate, request log and output. */
  readonly dir: string;
}

type LambdaHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2 | string>;

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FUNCTION_NAME = 'podmutation-test-admission';
// serverless.yml: the admission function's memorySize and timeout.
const MEMORY_MB = '1024';
const TIMEOUT_MS = 3_000;
const LISTENING = 'lambda-host listening on ';
// What API Gateway answers when the function fails instead of returning a result.
const INTERNAL_SERVER_ERROR = {
  statusCode: 500,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: 'Internal Server Error' }),
};
const NOT_FOUND = {
  statusCode: 404,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: 'Not Found' }),
};

/** A short digest of a token (as it appears in the path), so that the request log names which token came without holding it. */
function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

/** The variables the Lambda runtime sets itself (docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html). */
function runtimeEnvironment(region: string): Record<string, string> {
  return {
    AWS_LAMBDA_FUNCTION_NAME: FUNCTION_NAME,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: MEMORY_MB,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${FUNCTION_NAME}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `local/[$LATEST]${randomUUID().replaceAll('-', '')}`,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_DEFAULT_REGION: region,
    LAMBDA_TASK_ROOT: ROOT,
    _HANDLER: 'dist/admission/index.handler',
    TZ: ':UTC',
  };
}

function lambdaContext(): Context {
  const deadline = Date.now() + TIMEOUT_MS;
  const region = process.env.AWS_REGION ?? 'eu-west-1';
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: FUNCTION_NAME,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:123456789012:function:${FUNCTION_NAME}`,
    memoryLimitInMB: MEMORY_MB,
    awsRequestId: randomUUID(),
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME ?? '',
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME ?? '',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The child: loads the bundle once, then serves until SIGTERM. */
function main(argv: readonly string[]): void {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      bundle: { type: 'string' },
      port: { type: 'string' },
      cert: { type: 'string' },
      key: { type: 'string' },
      'request-log': { type: 'string' },
    },
    strict: true,
  });
  const { bundle, port, cert, key } = values;
  const logFile = values['request-log'];
  if (bundle === undefined || port === undefined || cert === undefined || key === undefined || logFile === undefined) {
    throw new Error('lambda-host needs --bundle, --port, --cert, --key and --request-log');
  }
  // The init phase: the bundle's module scope reads the environment and creates its clients, once per container.
  const { handler } = createRequire(SELF)(resolve(bundle)) as { handler: LambdaHandler };
  const log = createWriteStream(logFile, { flags: 'a' });
  let invocations: Promise<unknown> = Promise.resolve();
  const invoke = (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const run = invocations.then(async () => {
      try {
        const result = await handler(event, lambdaContext());
        // A string result is the body of a 200 (API Gateway payload 2.0 format).
        return typeof result === 'string' ? { statusCode: 200, body: result } : result;
      } catch {
        return INTERNAL_SERVER_ERROR;
      }
    });
    invocations = run;
    return run;
  };
  const options: ServerOptions = { cert: readFileSync(cert), key: readFileSync(key) };
  const server = createServer(options, (request: IncomingMessage, response: ServerResponse) => {
    const head = requestHead(request);
    const at = Date.now();
    readBody(request)
      .then(async (body) => {
        if (!isAdmissionRoute(head)) return NOT_FOUND;
        return invoke(toHttpApiEvent(head, body, new Date(at)));
      })
      .then((result) => {
        const token = /^\/admit\/([^/?]+)/.exec(head.url)?.[1];
        const record: HostRequest = {
          at,
          token: token === undefined ? '' : tokenFingerprint(token),
          status: result.statusCode ?? 200,
        };
        log.write(`${JSON.stringify(record)}\n`);
        writeHttpApiResult(response, result);
      })
      .catch(() => response.destroy());
  });
  server.listen(Number(port), '127.0.0.1', () => console.log(`${LISTENING}https://127.0.0.1:${port}`));
  process.once('SIGTERM', () => {
    server.close(() => log.end(() => process.exit(0)));
    server.closeAllConnections();
  });
}

/**
 * Starts the host as a child process that dies with this one, with only the function's and the runtime's
 * environment (as a Lambda container has), and resolves once it listens; rejects with its output if it exits first
 * (a configuration the bundle refuses at init, for one).
 */
async function startLambdaHost(options: LambdaHostOptions): Promise<LambdaHost> {
  const certFile = join(options.dir, 'lambda-host.crt');
  const keyFile = join(options.dir, 'lambda-host.key');
  const requestLog = join(options.dir, 'lambda-host-requests.jsonl');
  const logFile = join(options.dir, 'lambda-host.log');
  await Promise.all([
    writeFile(certFile, options.certificate.cert),
    writeFile(keyFile, options.certificate.key),
    writeFile(requestLog, ''),
  ]);
  const port = await freePort();
  const environment = { ...runtimeEnvironment(options.environment.AWS_REGION ?? 'eu-west-1'), ...options.environment };
  const child = startSupervised(
    'lambda-host',
    process.execPath,
    [
      '--import',
      'tsx',
      SELF,
      '--bundle',
      options.bundle,
      '--port',
      String(port),
      '--cert',
      certFile,
      '--key',
      keyFile,
      '--request-log',
      requestLog,
    ],
    { logFile, env: environment, cwd: ROOT },
  );
  await waitFor(
    'the Lambda host to listen',
    async () => ((await readFile(logFile, 'utf8')).includes(LISTENING) ? true : undefined),
    {
      failFast: () => (child.exited() === undefined ? undefined : `exited (${child.exited()}):\n${child.logTail()}`),
      timeoutMs: 60_000,
    },
  );
  return {
    baseUrl: `https://127.0.0.1:${port}`,
    process: child,
    requests: async () =>
      (await readFile(requestLog, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as HostRequest),
    stop: () => child.stop(),
  };
}

/** The function's environment besides its table and token: test credentials, the region and Powertools' names. */
const TEST_FUNCTION_ENVIRONMENT: Readonly<Record<string, string>> = {
  AWS_ACCESS_KEY_ID: 'AKIDTEST',
  AWS_SECRET_ACCESS_KEY: 'test-secret',
  AWS_SESSION_TOKEN: 'test-session',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_SERVICE_NAME: 'podmutation-test-admission',
  POWERTOOLS_METRICS_NAMESPACE: 'podmutation',
};

/** The admission bundle among those buildFunctions wrote. */
function admissionBundle(bundles: readonly { readonly name: string; readonly outfile: string }[]): string {
  const bundle = bundles.find(({ name }) => name === 'admission');
  if (bundle === undefined) throw new Error('the build wrote no admission bundle');
  return bundle.outfile;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === SELF) {
  main(process.argv.slice(2));
}

export {
  startLambdaHost,
  tokenFingerprint,
  admissionBundle,
  runtimeEnvironment,
  lambdaContext,
  TEST_FUNCTION_ENVIRONMENT,
};
export type { LambdaHost, LambdaHostOptions, HostRequest };
