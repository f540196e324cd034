import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClusterError } from '../../lib/errors/index.ts';
import { createPodMutationSource, type PodMutationSource } from '../../lib/cluster/index.ts';
import {
  createTestCertificates,
  kubeconfigFor,
  startFakeApiServer,
  type FakeApiServer,
  type KubeconfigOverrides,
} from './fake-api-server.ts';

let server: FakeApiServer;
let source: PodMutationSource;

beforeAll(async () => {
  server = await startFakeApiServer();
  source = createPodMutationSource({ mode: 'kubeconfigText', text: kubeconfigFor(server) }, { requestTimeoutMs: 300 });
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  server.clearFaults();
  for (const name of server.names()) server.remove(name);
});

const acceptedStatus = {
  observedGeneration: 1,
  lastSyncTime: '2026-12-01T12:00:00Z',
  conditions: [
    { type: 'Accepted', status: 'True', reason: 'Valid', message: '', lastTransitionTime: '2026-12-01T12:00:00Z' },
  ],
};

describe('patching podmutation status', () => {
  it('sends a JSON merge patch of { status } to the status subresource', async () => {
    server.put({ metadata: { name: 'spot-first' }, spec: { priority: 1 } });
    const before = server.statusPatches.length;

    await source.patchStatus('spot-first', acceptedStatus);

    expect(server.statusPatches.slice(before)).toEqual([
      {
        name: 'spot-first',
        path: '/apis/agent.cloudpilot.ai/v1alpha1/podmutations/spot-first/status',
        contentType: 'application/merge-patch+json',
        query: { fieldManager: 'podmutation-sync' },
        body: { status: acceptedStatus },
      },
    ]);
  });

  it('leaves the resource with the patched status and its spec untouched', async () => {
    server.put({ metadata: { name: 'spot-first' }, spec: { priority: 7 } });

    await source.patchStatus('spot-first', acceptedStatus);

    expect(server.get('spot-first')).toMatchObject({ spec: { priority: 7 }, status: acceptedStatus });
  });

  it('rejects with reason notFound naming the resource when it was deleted', async () => {
    const failure = source.patchStatus('gone-rule', acceptedStatus);

    await expect(failure).rejects.toBeInstanceOf(ClusterError);
    await expect(failure).rejects.toThrow(
      /patching the status of podmutations\.agent\.cloudpilot\.ai "gone-rule" failed: 404 Not Found/,
    );
    await expect(failure).rejects.toMatchObject({ context: { reason: 'notFound', name: 'gone-rule' } });
  });

  it('rejects with reason forbidden when the identity may not patch status', async () => {
    server.put({ metadata: { name: 'spot-first' }, spec: {} });
    server.fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { on: 'patch' });

    await expect(source.patchStatus('spot-first', acceptedStatus)).rejects.toMatchObject({
      name: 'ClusterError',
      context: { reason: 'forbidden' },
    });
  });

  it('rejects with reason timeout when the server does not answer the patch', async () => {
    server.put({ metadata: { name: 'spot-first' }, spec: {} });
    server.fail({ kind: 'hang' }, { on: 'patch' });

    await expect(source.patchStatus('spot-first', acceptedStatus)).rejects.toMatchObject({
      name: 'ClusterError',
      context: { reason: 'timeout', operation: 'patchStatus' },
    });
  });
});

describe('failed status writes, as every cluster request reports them', () => {
  const sourceWith = (overrides: KubeconfigOverrides) =>
    createPodMutationSource(
      { mode: 'kubeconfigText', text: kubeconfigFor(server, overrides) },
      { requestTimeoutMs: 300 },
    );

  it.each([
    {
      when: 'the connection is reset',
      arrange: () => server.fail({ kind: 'reset' }, { on: 'patch' }),
      overrides: (): Promise<KubeconfigOverrides> => Promise.resolve({}),
      reason: 'network',
      message: /could not reach https:\/\/127\.0\.0\.1:\d+/,
    },
    {
      when: 'the server certificate is not signed by the configured CA',
      arrange: () => undefined,
      overrides: async (): Promise<KubeconfigOverrides> => ({ caPem: (await createTestCertificates()).caPem }),
      reason: 'network',
      message: /TLS verification of https:\/\/127\.0\.0\.1:\d+ failed .*not signed by the cluster CA/,
    },
    {
      when: 'the token is not accepted',
      arrange: () => undefined,
      overrides: (): Promise<KubeconfigOverrides> => Promise.resolve({ token: 'not-the-token' }),
      reason: 'unauthorized',
      message: /401 Unauthorized \(the API server did not accept the credentials/,
    },
    {
      when: 'the API server fails, quoting what it said',
      arrange: () =>
        server.fail({ kind: 'status', code: 500, message: 'etcdserver: request timed out' }, { on: 'patch' }),
      overrides: (): Promise<KubeconfigOverrides> => Promise.resolve({}),
      reason: 'server',
      message:
        /500 Internal Server Error \(the API server could not serve the request\); the API server said: etcdserver: request timed out/,
    },
  ])('rejects with reason $reason when $when', async ({ arrange, overrides, reason, message }) => {
    server.put({ metadata: { name: 'spot-first' }, spec: {} });
    const source = sourceWith(await overrides());
    arrange();

    const failure = source.patchStatus('spot-first', acceptedStatus);

    await expect(failure).rejects.toMatchObject({
      name: 'ClusterError',
      context: { reason, operation: 'patchStatus', name: 'spot-first' },
    });
    await expect(failure).rejects.toThrow(message);
  });
});

describe('connections to the API server', () => {
  const freshSource = () =>
    createPodMutationSource({ mode: 'kubeconfigText', text: kubeconfigFor(server) }, { pageSize: 2 });
  const names = (count: number) =>
    Array.from({ length: count }, (_, index) => `rule-${String(index).padStart(2, '0')}`);
  const putRules = (count: number) => {
    for (const name of names(count)) server.put({ metadata: { name }, spec: { priority: 1 } });
  };

  it('reuses its connections for the pages of a list', async () => {
    putRules(20);
    const before = server.connections;

    const list = await freshSource().listPodMutations();

    expect(list.items).toHaveLength(20);
    // undici opens a second connection when a request is sent in the same tick as the previous answer ends; a
    // connection per request would be 10 here.
    expect(server.connections - before).toBeLessThanOrEqual(2);
  });

  it('writes statuses one after another over one connection', async () => {
    putRules(20);
    const source = freshSource();
    const before = server.connections;

    for (const name of names(20)) await source.patchStatus(name, acceptedStatus);

    expect(server.connections - before).toBe(1);
  });

  it('opens no more connections for status writes than writes in flight', async () => {
    putRules(40);
    const source = freshSource();
    const before = { connections: server.connections, patches: server.statusPatches.length };
    const inFlight = 4;
    const queue = names(40);

    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift())
          await source.patchStatus(name, acceptedStatus);
      }),
    );

    expect(server.statusPatches.length - before.patches).toBe(40);
    expect(server.connections - before.connections).toBeLessThanOrEqual(inFlight);
  });
});
