/**
 * A loopback stand-in for the two AWS calls cluster access makes — EKS DescribeCluster (REST JSON) and
 * Secrets Manager GetSecretValue (JSON 1.1) — so tests drive the real SDK clients.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EKSClient } from '@aws-sdk/client-eks';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** What DescribeCluster answers for one cluster. */
interface FakeEksCluster {
  readonly endpoint?: string;
  /** Base64 of the CA PEM, as EKS returns it. */
  readonly caData?: string;
  readonly status?: string;
}

interface FakeAws {
  readonly url: string;
  readonly clusters: Map<string, FakeEksCluster>;
  /** SecretString by secret ARN. */
  readonly secrets: Map<string, string>;
  /** Secret ARNs the caller may not read (AccessDeniedException). */
  readonly deniedSecrets: Set<string>;
  readonly calls: { describeCluster: number; getSecretValue: number };
  eksClient(): EKSClient;
  secretsManagerClient(): SecretsManagerClient;
  close(): Promise<void>;
}

const REGION = 'eu-west-1';
const TEST_CREDENTIALS = { accessKeyId: 'AKIDFAKEAWS', secretAccessKey: 'fake-aws-secret' };

/** Starts the fake on 127.0.0.1 with an ephemeral port. */
async function startFakeAws(): Promise<FakeAws> {
  const clusters = new Map<string, FakeEksCluster>();
  const secrets = new Map<string, string>();
  const deniedSecrets = new Set<string>();
  const calls = { describeCluster: 0, getSecretValue: 0 };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = await readBody(request);
    const target = request.headers['x-amz-target'];
    if (request.method === 'POST' && target === 'secretsmanager.GetSecretValue') {
      calls.getSecretValue += 1;
      const { SecretId: secretId } = JSON.parse(body) as { SecretId: string };
      if (deniedSecrets.has(secretId)) {
        return awsJsonError(
          response,
          'AccessDeniedException',
          `User is not authorized to perform: secretsmanager:GetSecretValue on ${secretId}`,
        );
      }
      const secret = secrets.get(secretId);
      if (secret === undefined) {
        return awsJsonError(response, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
      }
      return sendJson(
        response,
        200,
        { ARN: secretId, Name: secretId.split(':').at(-1), SecretString: secret },
        'application/x-amz-json-1.1',
      );
    }
    const clusterPath = /^\/clusters\/([^/?]+)$/.exec(request.url ?? '');
    if (request.method === 'GET' && clusterPath !== null) {
      calls.describeCluster += 1;
      const name = decodeURIComponent(clusterPath[1] ?? '');
      const cluster = clusters.get(name);
      if (cluster === undefined) {
        response.setHeader('x-amzn-errortype', 'ResourceNotFoundException');
        return sendJson(response, 404, { message: `No cluster found for name: ${name}.` }, 'application/json');
      }
      return sendJson(
        response,
        200,
        {
          cluster: {
            name,
            arn: `arn:aws:eks:${REGION}:123456789012:cluster/${name}`,
            status: cluster.status ?? 'ACTIVE',
            ...(cluster.endpoint === undefined ? {} : { endpoint: cluster.endpoint }),
            ...(cluster.caData === undefined ? {} : { certificateAuthority: { data: cluster.caData } }),
          },
        },
        'application/json',
      );
    }
    sendJson(
      response,
      400,
      { message: `unexpected ${request.method} ${request.url} ${String(target)}` },
      'application/json',
    );
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => response.destroy(error as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientConfig = { region: REGION, endpoint: url, credentials: TEST_CREDENTIALS, maxAttempts: 1 };

  return {
    url,
    clusters,
    secrets,
    deniedSecrets,
    calls,
    eksClient: () => new EKSClient(clientConfig),
    secretsManagerClient: () => new SecretsManagerClient(clientConfig),
    async close(): Promise<void> {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function awsJsonError(response: ServerResponse, type: string, message: string): void {
  sendJson(response, 400, { __type: type, message }, 'application/x-amz-json-1.1');
}

function sendJson(response: ServerResponse, code: number, body: unknown, contentType: string): void {
  response.writeHead(code, { 'content-type': contentType });
  response.end(JSON.stringify(body));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export { startFakeAws };
export type { FakeAws, FakeEksCluster };
