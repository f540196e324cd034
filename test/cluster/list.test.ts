import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClusterError } from '../../lib/errors/index.ts';
import { createPodMutationSource, type PodMutationSource } from '../../lib/cluster/index.ts';
import { createTestCertificates, kubeconfigFor, startFakeApiServer, type FakeApiServer } from './fake-api-server.ts';

let server: FakeApiServer;

beforeAll(async () => {
  server = await startFakeApiServer();
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  server.clearFaults();
  for (const name of server.names()) server.remove(name);
});

function sourceFor(
  options: { pageSize?: number; requestTimeoutMs?: number; maxListRestarts?: number; token?: string } = {},
): PodMutationSource {
  const { token, ...sourceOptions } = options;
  return createPodMutationSource(
    { mode: 'kubeconfigText', text: kubeconfigFor(server, token === undefined ? {} : { token }) },
    sourceOptions,
  );
}

function addRules(count: number): string[] {
  const names = Array.from({ length: count }, (_, index) => `rule-${String(index).padStart(2, '0')}`);
  for (const name of names) server.put({ metadata: { name }, spec: { priority: 1 } });
  return names;
}

function namesOf(items: readonly unknown[]): string[] {
  return items.map((item) => (item as { metadata: { name: string } }).metadata.name);
}

/** The ClusterError a promise rejects with, so one test can assert its reason and message together. */
async function clusterFailure(promise: Promise<unknown>): Promise<ClusterError> {
  await expect(promise).rejects.toBeInstanceOf(ClusterError);
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error as ClusterError,
  );
}

describe('listing podmutations', () => {
  it('returns every item across several pages and the list resourceVersion', async () => {
    const names = addRules(7);
    const expectedVersion = server.resourceVersion;

    const list = await sourceFor({ pageSize: 3 }).listPodMutations();

    expect(namesOf(list.items)).toEqual(names);
    expect(list.resourceVersion).toBe(expectedVersion);
  });

  it('asks for pages of the configured size and follows the continue tokens', async () => {
    addRules(5);
    const before = server.requests.length;

    await sourceFor({ pageSize: 2 }).listPodMutations();

    const listRequests = server.requests.slice(before);
    expect(listRequests.map((request) => request.query['limit'])).toEqual(['2', '2', '2']);
    expect(listRequests[0]?.query['continue']).toBeUndefined();
    expect(listRequests[1]?.query['continue']).toBeTruthy();
    expect(listRequests.every((request) => request.path === '/apis/agent.cloudpilot.ai/v1alpha1/podmutations')).toBe(
      true,
    );
  });

  it('returns an empty list with its resourceVersion when the cluster has no podmutations', async () => {
    const list = await sourceFor().listPodMutations();

    expect(list.items).toEqual([]);
    expect(list.resourceVersion).toBe(server.resourceVersion);
  });

  it('restarts the list from the first page when a continue token has expired', async () => {
    const names = addRules(5);
    server.expireContinueTokens(1);
    const before = server.requests.length;

    const list = await sourceFor({ pageSize: 2 }).listPodMutations();

    expect(namesOf(list.items)).toEqual(names);
    const continues = server.requests.slice(before).map((request) => request.query['continue'] !== undefined);
    // first page, expired second page, then a fresh first page and its two continuations
    expect(continues).toEqual([false, true, false, true, true]);
  });

  it('rejects with reason gone once a continue token keeps expiring past the restart limit', async () => {
    addRules(3);
    server.expireContinueTokens(10);

    const error = await clusterFailure(sourceFor({ pageSize: 1, maxListRestarts: 2 }).listPodMutations());

    expect(error.context['reason']).toBe('gone');
    expect(error.message).toMatch(/continue token expired 3 times/);
  });

  it('rejects with reason unauthorized when the server refuses the token', async () => {
    const error = await clusterFailure(sourceFor({ token: 'wrong-token' }).listPodMutations());

    expect(error.context['reason']).toBe('unauthorized');
    expect(error.message).toMatch(/^listing podmutations\.agent\.cloudpilot\.ai failed: 401 Unauthorized/);
  });

  it('never puts the bearer token into the error', async () => {
    const token = 'secret-token-that-must-not-leak';

    const error = await clusterFailure(sourceFor({ token }).listPodMutations());

    expect(JSON.stringify({ message: error.message, context: error.context })).not.toContain(token);
  });

  it('rejects with reason forbidden and points at the RBAC manifest on 403', async () => {
    server.fail({
      kind: 'status',
      code: 403,
      reason: 'Forbidden',
      message: 'podmutations.agent.cloudpilot.ai is forbidden: User "sync" cannot list resource',
    });

    const error = await clusterFailure(sourceFor().listPodMutations());

    expect(error.context['reason']).toBe('forbidden');
    expect(error.message).toMatch(
      /403 Forbidden \(the identity of these credentials lacks permission for this request: the sync's grants are infra\/rbac\.yaml, report's infra\/rbac-report\.yaml\)/,
    );
    expect(error.message).toContain('User "sync" cannot list resource');
  });

  it('rejects with reason notFound and says the CRD is missing on 404', async () => {
    server.fail({
      kind: 'status',
      code: 404,
      reason: 'NotFound',
      message: 'the server could not find the requested resource',
    });

    const error = await clusterFailure(sourceFor().listPodMutations());

    expect(error.context['reason']).toBe('notFound');
    expect(error.message).toMatch(
      /404 Not Found: the PodMutation CRD \(podmutations\.agent\.cloudpilot\.ai\) is not installed/,
    );
  });

  it('rejects with reason server on 500', async () => {
    server.fail({ kind: 'status', code: 500, reason: 'InternalError', message: 'etcdserver: request timed out' });

    const error = await clusterFailure(sourceFor().listPodMutations());

    expect(error.context['reason']).toBe('server');
    expect(error.context['status']).toBe(500);
  });

  it('rejects the whole list when a later page fails, instead of returning the pages before it', async () => {
    addRules(4);
    server.fail({ kind: 'status', code: 500 }, { on: 'continue' });

    const error = await clusterFailure(sourceFor({ pageSize: 2 }).listPodMutations());

    expect(error.context['reason']).toBe('server');
  });

  it('rejects with reason timeout when the server never answers', async () => {
    server.fail({ kind: 'hang' });
    const started = Date.now();

    const error = await clusterFailure(sourceFor({ requestTimeoutMs: 200 }).listPodMutations());

    expect(error.context['reason']).toBe('timeout');
    expect(error.message).toMatch(/within 200 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('rejects with reason network when the connection is reset', async () => {
    server.fail({ kind: 'reset' });

    const error = await clusterFailure(sourceFor().listPodMutations());

    expect(error.context['reason']).toBe('network');
  });

  it('rejects with reason malformed when the body is not valid JSON', async () => {
    server.fail({ kind: 'raw', body: '{"kind":"PodMutationList","items":[' });

    const error = await clusterFailure(sourceFor().listPodMutations());

    expect(error.context['reason']).toBe('malformed');
  });

  it.each([
    ['the body is not an object', '[1,2,3]', /is not a JSON object \(got an array\)/],
    ['the list has no metadata', '{"items":[]}', /has no list metadata/],
    ['the list metadata has no resourceVersion', '{"metadata":{},"items":[]}', /has no metadata\.resourceVersion/],
    [
      'items is not an array',
      '{"metadata":{"resourceVersion":"5"},"items":{}}',
      /items field that is not an array \(got object\)/,
    ],
    [
      'items is null',
      '{"metadata":{"resourceVersion":"5"},"items":null}',
      /items field that is not an array \(got null\)/,
    ],
    [
      'an item has no metadata.name',
      '{"metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}},{"spec":{}}]}',
      /items\[1\] without metadata\.name/,
    ],
  ])('rejects with reason malformed when %s', async (_case, body, message) => {
    server.fail({ kind: 'raw', body });

    const error = await clusterFailure(sourceFor().listPodMutations());

    expect(error.context['reason']).toBe('malformed');
    expect(error.message).toMatch(message);
  });

  it('rejects with reason malformed when a later page is malformed, returning nothing from the earlier pages', async () => {
    addRules(4);
    server.fail({ kind: 'raw', body: '{"metadata":{"resourceVersion":"9"},"items":[{}]}' }, { on: 'continue' });

    const error = await clusterFailure(sourceFor({ pageSize: 2 }).listPodMutations());

    expect(error.context['reason']).toBe('malformed');
    expect(error.message).toMatch(/page 2 of the list has items\[0\] without metadata\.name/);
  });

  it('rejects with reason network when the server certificate is not signed by the configured CA', async () => {
    const otherAuthority = await createTestCertificates();
    const source = createPodMutationSource({
      mode: 'kubeconfigText',
      text: kubeconfigFor(server, { caPem: otherAuthority.caPem }),
    });

    const error = await clusterFailure(source.listPodMutations());

    expect(error.context['reason']).toBe('network');
    expect(error.message).toMatch(
      /TLS verification of https:\/\/127\.0\.0\.1:\d+ failed .*not signed by the cluster CA/,
    );
  });

  it('rejects with reason network when nothing listens at the server address', async () => {
    const closed = await startFakeApiServer();
    await closed.close();

    const error = await clusterFailure(
      createPodMutationSource({ mode: 'kubeconfigText', text: kubeconfigFor(closed) }).listPodMutations(),
    );

    expect(error.context['reason']).toBe('network');
    expect(error.message).toMatch(/ECONNREFUSED/);
  });
});
