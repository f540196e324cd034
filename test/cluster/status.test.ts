import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClusterError } from '../../lib/errors/index.ts';
import { createPodMutationSource, type PodMutationSource } from '../../lib/cluster/index.ts';
import { kubeconfigFor, startFakeApiServer, type FakeApiServer } from './fake-api-server.ts';

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
  conditions: [{ type: 'Accepted', status: 'True', reason: 'Valid', message: '', lastTransitionTime: '2026-12-01T12:00:00Z' }],
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
    await expect(failure).rejects.toThrow(/patching the status of podmutations\.agent\.cloudpilot\.ai "gone-rule" failed: 404 Not Found/);
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

describe('connections to the API server', () => {
  const freshSource = () => createPodMutationSource({ mode: 'kubeconfigText', text: kubeconfigFor(server) }, { pageSize: 2 });
  const names = (count: number) => Array.from({ length: count }, (_, index) => `rule-${String(index).padStart(2, '0')}`);
  // undici opens a second connection when a request is sent in the same tick as the previous answer ends, so a
  // reused pool holds up to twice the requests in flight; a connection per request would be dozens here.
  const reusedPool = (inFlight: number) => 2 * inFlight;

  it('reuses its connections for a paginated list and the status writes after it, one request at a time', async () => {
    for (const name of names(20)) server.put({ metadata: { name }, spec: { priority: 1 } });
    const source = freshSource();
    const before = server.connections;

    const list = await source.listPodMutations();
    for (const name of names(20)) await source.patchStatus(name, acceptedStatus);

    expect(list.items).toHaveLength(20);
    expect(server.connections - before).toBeLessThanOrEqual(reusedPool(1));
  });

  it('keeps no more connections than its pool needs for the requests in flight', async () => {
    for (const name of names(40)) server.put({ metadata: { name }, spec: { priority: 1 } });
    const source = freshSource();
    const before = { connections: server.connections, patches: server.statusPatches.length };
    const inFlight = 4;
    const queue = names(40);

    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) await source.patchStatus(name, acceptedStatus);
      }),
    );

    expect(server.statusPatches.length - before.patches).toBe(40);
    expect(server.connections - before.connections).toBeLessThanOrEqual(reusedPool(inFlight));
  });
});
