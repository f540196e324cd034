import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ClusterError, ConfigurationError } from '../../lib/errors/index.ts';
import { createPodMutationSource } from '../../lib/cluster/index.ts';
import { kubeconfigFor, startFakeApiServer, writeKubeconfig, type FakeApiServer } from './fake-api-server.ts';
import { startFakeAws, type FakeAws } from './fake-aws.ts';
import { silentEndpoint } from '../store/support.ts';
import { type PodMutationSourceOptions } from '../../lib/cluster/source.ts';

let server: FakeApiServer;
let aws: FakeAws;
// Tokens the fake API server accepts; tests rotate them.
const acceptedTokens = new Set<string>(['token-one']);

beforeAll(async () => {
  server = await startFakeApiServer({ token: 'token-one', acceptToken: (token) => acceptedTokens.has(token) });
  server.put({ metadata: { name: 'spot-first' }, spec: { priority: 1 } });
  aws = await startFakeAws();
});

afterAll(async () => {
  await server.close();
  await aws.close();
});

function secretArn(name: string): string {
  return `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${name}`;
}

function secretSource(arn: string, options: PodMutationSourceOptions = {}) {
  return createPodMutationSource(
    { mode: 'kubeconfigSecret', secretArn: arn, region: 'eu-west-1' },
    { secretsManagerClient: aws.secretsManagerClient(), ...options },
  );
}

function kubeconfigText(cluster: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user: { token: 'token-one' } }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'ctx',
    ...extra,
  });
}

/** The error `run` throws; fails the test when it returns normally. */
function thrownBy(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

const caData = (): string => Buffer.from(server.caPem).toString('base64');

describe('kubeconfig files and texts', () => {
  it('lists through a kubeconfig file', async () => {
    const list = await createPodMutationSource({
      mode: 'kubeconfigFile',
      path: writeKubeconfig(server),
    }).listPodMutations();

    expect(list.items).toHaveLength(1);
  });

  it('resolves a relative certificate-authority path against the kubeconfig file folder', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'kubeconfig-relative-'));
    writeFileSync(join(folder, 'ca.pem'), server.caPem);
    writeFileSync(join(folder, 'config'), kubeconfigText({ server: server.url, 'certificate-authority': 'ca.pem' }));

    const list = await createPodMutationSource({
      mode: 'kubeconfigFile',
      path: join(folder, 'config'),
    }).listPodMutations();

    expect(list.items).toHaveLength(1);
  });

  it('uses the context it is given instead of the current context', async () => {
    const text = stringify({
      clusters: [{ name: 'c', cluster: { server: server.url, 'certificate-authority-data': caData() } }],
      users: [
        { name: 'stale', user: { token: 'revoked' } },
        { name: 'sync', user: { token: 'token-one' } },
      ],
      contexts: [
        { name: 'old', context: { cluster: 'c', user: 'stale' } },
        { name: 'sync', context: { cluster: 'c', user: 'sync' } },
      ],
      'current-context': 'old',
    });

    const list = await createPodMutationSource({ mode: 'kubeconfigText', text, context: 'sync' }).listPodMutations();

    expect(list.items).toHaveLength(1);
  });

  it('fails fast with ConfigurationError when the kubeconfig file cannot be read', () => {
    expect(() => createPodMutationSource({ mode: 'kubeconfigFile', path: '/nonexistent/kubeconfig' })).toThrow(
      /cannot read kubeconfig file \/nonexistent\/kubeconfig: ENOENT/,
    );
  });

  it('fails fast when the requested context does not exist', () => {
    expect(() =>
      createPodMutationSource({ mode: 'kubeconfigText', text: kubeconfigFor(server), context: 'nope' }),
    ).toThrow(/has no context "nope"/);
  });

  it('refuses a cluster with insecure-skip-tls-verify', () => {
    const text = kubeconfigText({ server: server.url, 'insecure-skip-tls-verify': true });

    expect(() => createPodMutationSource({ mode: 'kubeconfigText', text })).toThrow(/sets insecure-skip-tls-verify/);
  });

  it('refuses a plain http server', () => {
    const text = kubeconfigText({ server: 'http://127.0.0.1:8080' });

    expect(() => createPodMutationSource({ mode: 'kubeconfigText', text })).toThrow(
      /server must be an https:\/\/ URL, got "http:\/\/127\.0\.0\.1:8080"/,
    );
  });

  it('refuses a kubeconfig without a current context', () => {
    const text = kubeconfigText(
      { server: server.url, 'certificate-authority-data': caData() },
      { 'current-context': '' },
    );

    expect(() => createPodMutationSource({ mode: 'kubeconfigText', text })).toThrow(ConfigurationError);
  });

  it('reports invalid YAML without quoting the text, which may hold a token', () => {
    const text = 'users:\n- name: u\n  user:\n    token: do-not-print-me\n   bad: [\n';

    const error = thrownBy(() => createPodMutationSource({ mode: 'kubeconfigText', text }));

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(/^the kubeconfig text is not valid YAML: .* at line \d+$/);
    expect(error.message).not.toContain('do-not-print-me');
    expect(error.cause).toBeUndefined();
  });
});

describe('kubeconfig from Secrets Manager', () => {
  it('lists with the kubeconfig stored as the secret string', async () => {
    aws.secrets.set(secretArn('ok'), kubeconfigFor(server));

    const list = await secretSource(secretArn('ok')).listPodMutations();

    expect(list.items).toHaveLength(1);
  });

  it('reads the secret once for the life of the source', async () => {
    aws.secrets.set(secretArn('cached'), kubeconfigFor(server));
    const source = secretSource(secretArn('cached'));
    const before = aws.calls.getSecretValue;

    await source.listPodMutations();
    await source.listPodMutations();
    await source.patchStatus('spot-first', { observedGeneration: 1 });

    expect(aws.calls.getSecretValue - before).toBe(1);
  });

  it('reads the secret again after a 401, so a rotated token is picked up', async () => {
    const arn = secretArn('rotated');
    aws.secrets.set(arn, kubeconfigFor(server, { token: 'token-one' }));
    const source = secretSource(arn);
    await source.listPodMutations();

    acceptedTokens.add('token-two');
    acceptedTokens.delete('token-one');
    aws.secrets.set(arn, kubeconfigFor(server, { token: 'token-two' }));
    try {
      await expect(source.listPodMutations()).rejects.toMatchObject({ context: { reason: 'unauthorized' } });
      const list = await source.listPodMutations();

      expect(list.items).toHaveLength(1);
    } finally {
      acceptedTokens.add('token-one');
    }
  });

  it('rejects with ClusterError reason notFound when the secret does not exist', async () => {
    const failure = secretSource(secretArn('missing')).listPodMutations();

    await expect(failure).rejects.toBeInstanceOf(ClusterError);
    await expect(failure).rejects.toThrow(/reading the kubeconfig secret .*missing failed: ResourceNotFoundException/);
    await expect(failure).rejects.toMatchObject({ context: { reason: 'notFound' } });
  });

  it('backs off a failed secret read: a list during the backoff fails with the same error, one after it reads again', async () => {
    const arn = secretArn('late');
    let now = Date.parse('2026-12-01T10:00:00.000Z');
    const source = secretSource(arn, { clock: () => new Date(now) });
    const failure = await source.listPodMutations().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ClusterError);
    aws.secrets.set(arn, kubeconfigFor(server));
    const readsAfterFailure = aws.calls.getSecretValue;

    await expect(source.listPodMutations()).rejects.toBe(failure);
    expect(aws.calls.getSecretValue).toBe(readsAfterFailure);
    now += 1_000;

    expect((await source.listPodMutations()).items).toHaveLength(1);
  });

  it('fails with reason timeout within requestTimeoutMs when Secrets Manager never answers', async () => {
    const silent = await silentEndpoint();
    const client = new SecretsManagerClient({
      region: 'eu-west-1',
      endpoint: silent.endpoint,
      credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
      maxAttempts: 1,
      // The client would wait 20 s: only the access's deadline can end the list sooner.
      requestHandler: { requestTimeout: 20_000, throwOnRequestTimeout: true },
    });
    try {
      const source = secretSource(secretArn('silent'), { secretsManagerClient: client, requestTimeoutMs: 100 });

      await expect(source.listPodMutations()).rejects.toMatchObject({
        name: 'ClusterError',
        message: expect.stringMatching(
          /^resolving the connection to the kubeconfig in secret .*silent failed: no answer within 100 ms$/,
        ) as unknown,
        context: { reason: 'timeout' },
      });
      expect(silent.held()).toBe(1);
    } finally {
      client.destroy();
      await silent.close();
    }
  });

  it('rejects with reason forbidden when the role may not read the secret', async () => {
    const arn = secretArn('denied');
    aws.deniedSecrets.add(arn);

    await expect(secretSource(arn).listPodMutations()).rejects.toMatchObject({
      name: 'ClusterError',
      context: { reason: 'forbidden' },
      message: expect.stringMatching(/lacks secretsmanager:GetSecretValue/) as unknown,
    });
  });

  it('rejects with reason configuration when the secret is not a usable kubeconfig', async () => {
    const arn = secretArn('insecure');
    aws.secrets.set(arn, kubeconfigText({ server: server.url, 'insecure-skip-tls-verify': true }));

    await expect(secretSource(arn).listPodMutations()).rejects.toMatchObject({
      name: 'ClusterError',
      context: { reason: 'configuration' },
      message: expect.stringMatching(/the kubeconfig in secret .*insecure.* sets insecure-skip-tls-verify/) as unknown,
    });
  });
});
