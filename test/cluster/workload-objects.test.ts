import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createWorkloadObjectSource,
  WORKLOAD_OBJECT_KINDS,
  type WorkloadObjectSource,
} from '../../lib/cluster/index.ts';
import { ClusterError, ConfigurationError } from '../../lib/errors/index.ts';
import { kubeconfigFor, startFakeApiServer, type FakeApiServer, type WorkloadObjectInput } from './fake-api-server.ts';
import { type WorkloadObjectKind, type WorkloadObjectSourceOptions } from '../../lib/cluster/workload-objects.ts';

const API_VERSIONS: Readonly<Record<WorkloadObjectKind, string>> = {
  RuntimeClass: 'node.k8s.io/v1',
  CronJob: 'batch/v1',
  Job: 'batch/v1',
  Deployment: 'apps/v1',
  Rollout: 'argoproj.io/v1alpha1',
  ReplicaSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  ControllerRevision: 'apps/v1',
  DaemonSet: 'apps/v1',
  Pod: 'v1',
};

let server: FakeApiServer;

beforeAll(async () => {
  server = await startFakeApiServer();
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  server.clearFaults();
  server.clearObjects();
  server.setRolloutsInstalled(false);
});

function sourceFor(options: WorkloadObjectSourceOptions & { token?: string } = {}): WorkloadObjectSource {
  const { token, ...sourceOptions } = options;
  return createWorkloadObjectSource(
    { mode: 'kubeconfigText', text: kubeconfigFor(server, token === undefined ? {} : { token }) },
    sourceOptions,
  );
}

function object(kind: WorkloadObjectKind, namespace: string, name: string): WorkloadObjectInput {
  // RuntimeClasses are cluster-scoped: the namespace is then only part of the name.
  const metadata = kind === 'RuntimeClass' ? { name: `${namespace}.${name}` } : { namespace, name };
  return { apiVersion: API_VERSIONS[kind], kind, metadata, spec: {} };
}

function pods(namespace: string, count: number): WorkloadObjectInput[] {
  return Array.from({ length: count }, (_, index) => object('Pod', namespace, `pod-${String(index).padStart(5, '0')}`));
}

async function collect(pages: AsyncIterable<readonly unknown[]>): Promise<(readonly unknown[])[]> {
  const collected: (readonly unknown[])[] = [];
  for await (const page of pages) collected.push(page);
  return collected;
}

function namesOf(items: readonly unknown[]): string[] {
  return items.map((item) => {
    const { metadata } = item as { metadata: { namespace?: string; name: string } };
    return metadata.namespace === undefined
      ? metadata.name.replace('.', '/')
      : `${metadata.namespace}/${metadata.name}`;
  });
}

describe('listing workload objects', () => {
  it('lists the kinds RuntimeClasses first, then owners, and Pods last', () => {
    expect(WORKLOAD_OBJECT_KINDS).toEqual([
      'RuntimeClass',
      'CronJob',
      'Job',
      'Deployment',
      'Rollout',
      'ReplicaSet',
      'StatefulSet',
      'ControllerRevision',
      'DaemonSet',
      'Pod',
    ]);
  });

  it.each(WORKLOAD_OBJECT_KINDS.map((kind) => [kind]))('lists every %s with apiVersion and kind set', async (kind) => {
    server.setRolloutsInstalled(true);
    server.putObjects([object(kind, 'team-a', 'one'), object(kind, 'team-b', 'two')]);

    const pages = await collect(sourceFor().pages(kind));

    const items = pages.flat();
    expect(namesOf(items)).toEqual(['team-a/one', 'team-b/two']);
    expect(items.every((item) => (item as { apiVersion?: string }).apiVersion === API_VERSIONS[kind])).toBe(true);
    expect(items.every((item) => (item as { kind?: string }).kind === kind)).toBe(true);
  });

  it('keeps every field the API server sent, as raw JSON', async () => {
    server.putObjects([{ ...object('Pod', 'team-a', 'web'), spec: { futureField: { nested: [1, 2] } } }]);

    const [page] = await collect(sourceFor().pages('Pod'));

    const pod = page?.[0] as { spec: unknown; metadata: { creationTimestamp: unknown } };
    expect(pod.spec).toEqual({ futureField: { nested: [1, 2] } });
    expect(typeof pod.metadata.creationTimestamp).toBe('string');
  });

  it('yields several pages of the configured size, following the continue tokens', async () => {
    server.putObjects(pods('team-a', 7));
    const before = server.requests.length;

    const pages = await collect(sourceFor({ pageSize: 3 }).pages('Pod'));

    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    const listRequests = server.requests.slice(before);
    expect(listRequests.map((request) => request.query['limit'])).toEqual(['3', '3', '3']);
    expect(listRequests.map((request) => request.query['continue'] !== undefined)).toEqual([false, true, true]);
    expect(listRequests.every((request) => request.path === '/api/v1/pods')).toBe(true);
  });

  it('yields each page as soon as it arrives, so a consumer that stops early sends no further request', async () => {
    server.putObjects(pods('team-a', 10));
    const before = server.requests.length;

    for await (const page of sourceFor({ pageSize: 2 }).pages('Pod')) {
      expect(page).toHaveLength(2);
      break;
    }

    expect(server.requests.length - before).toBe(1);
  });

  it('lists only the given namespace through its namespaced path', async () => {
    server.putObjects([...pods('team-a', 2), ...pods('team-b', 3), object('ReplicaSet', 'team-b', 'web-1')]);
    const before = server.requests.length;

    const pages = await collect(sourceFor().pages('Pod', 'team-b'));

    expect(namesOf(pages.flat())).toEqual(['team-b/pod-00000', 'team-b/pod-00001', 'team-b/pod-00002']);
    expect(server.requests.slice(before).map((request) => request.path)).toEqual(['/api/v1/namespaces/team-b/pods']);
  });

  it('uses the group path for the other kinds, per namespace', async () => {
    server.putObjects([object('CronJob', 'team-a', 'nightly'), object('CronJob', 'team-b', 'hourly')]);
    const before = server.requests.length;

    const pages = await collect(sourceFor().pages('CronJob', 'team-a'));

    expect(namesOf(pages.flat())).toEqual(['team-a/nightly']);
    expect(server.requests.slice(before).map((request) => request.path)).toEqual([
      '/apis/batch/v1/namespaces/team-a/cronjobs',
    ]);
  });

  it('lists RuntimeClasses, which are cluster-scoped, whole whatever the namespace asked for', async () => {
    server.putObjects([
      { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' }, handler: 'runsc' },
    ]);
    const before = server.requests.length;

    const pages = await collect(sourceFor().pages('RuntimeClass', 'team-a'));

    expect(pages.flat()).toMatchObject([
      { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' } },
    ]);
    expect(server.requests.slice(before).map((request) => request.path)).toEqual([
      '/apis/node.k8s.io/v1/runtimeclasses',
    ]);
  });

  it('yields one empty page when the cluster has no objects of the kind', async () => {
    const pages = await collect(sourceFor().pages('DaemonSet'));

    expect(pages).toEqual([[]]);
  });

  it('yields no pages and no error when the Rollout CRD is not installed', async () => {
    server.putObjects([object('Rollout', 'team-a', 'canary')]);

    const pages = await collect(sourceFor().pages('Rollout'));

    expect(pages).toEqual([]);
  });

  it('lists the Rollouts when their CRD is installed', async () => {
    server.setRolloutsInstalled(true);
    server.putObjects([object('Rollout', 'team-a', 'canary')]);

    const pages = await collect(sourceFor().pages('Rollout'));

    expect(namesOf(pages.flat())).toEqual(['team-a/canary']);
    expect(pages.flat()[0]).toMatchObject({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout' });
  });

  it('lists 10,000 Pods in pages of 500 within a few seconds', async () => {
    server.putObjects(pods('scale', 10_000));
    const started = Date.now();

    const pages = await collect(sourceFor().pages('Pod'));

    expect(pages).toHaveLength(20);
    expect(pages.reduce((total, page) => total + page.length, 0)).toBe(10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('failures of a workload listing', () => {
  it('rejects with reason forbidden naming the missing verb and resource on 403', async () => {
    server.fail(
      {
        kind: 'status',
        code: 403,
        reason: 'Forbidden',
        message: 'pods is forbidden: User "report" cannot list resource "pods"',
      },
      { resource: 'pods' },
    );

    const listing = collect(sourceFor().pages('Pod'));

    await expect(listing).rejects.toThrow(ClusterError);
    await expect(listing).rejects.toHaveProperty('context.reason', 'forbidden');
    await expect(listing).rejects.toThrow(
      /^listing pods in all namespaces failed: 403 Forbidden: .*list pods in all namespaces.*; reading every namespace needs a ClusterRoleBinding: that of infra\/rbac-report\.yaml \(report -A\)/,
    );
  });

  it('yields no ControllerRevision, and no error, when the identity may not list them', async () => {
    server.fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { resource: 'controllerrevisions' });

    const pages = await collect(sourceFor().pages('ControllerRevision'));

    expect(pages.flat()).toEqual([]);
  });

  it('still rejects a forbidden ControllerRevision listing after pages were yielded', async () => {
    server.putObjects([object('ControllerRevision', 'team-a', 'a'), object('ControllerRevision', 'team-a', 'b')]);
    server.fail(
      { kind: 'status', code: 403, reason: 'Forbidden' },
      { on: 'continue', resource: 'controllerrevisions' },
    );

    const listing = collect(sourceFor({ pageSize: 1 }).pages('ControllerRevision'));

    await expect(listing).rejects.toHaveProperty('context.reason', 'forbidden');
  });

  it('names the API group and namespace of a forbidden owner listing', async () => {
    server.fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { resource: 'replicasets' });

    const listing = collect(sourceFor().pages('ReplicaSet', 'team-a'));

    await expect(listing).rejects.toThrow(
      /list replicasets in namespace team-a \(verb "list", resource "replicasets", API group "apps"\); bind infra\/rbac-report-namespace\.yaml \(report\) or infra\/rbac-rollout-namespace\.yaml \(rollout\) in namespace team-a/,
    );
  });

  it('names no namespace in a forbidden RuntimeClass listing: the collection is cluster-scoped', async () => {
    server.fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { resource: 'runtimeclasses' });

    const listing = collect(sourceFor().pages('RuntimeClass', 'team-a'));

    await expect(listing).rejects.toHaveProperty('context.reason', 'forbidden');
    await expect(listing).rejects.toThrow(
      /^listing runtimeclasses\.node\.k8s\.io failed: 403 Forbidden: .*list runtimeclasses \(verb "list", resource "runtimeclasses", API group "node\.k8s\.io"\)/,
    );
  });

  it('rejects with reason gone and asks to start over when the continue token expires mid-list', async () => {
    server.putObjects(pods('team-a', 5));
    server.expireContinueTokens(1);
    const delivered: number[] = [];

    const listing = (async () => {
      for await (const page of sourceFor({ pageSize: 2 }).pages('Pod')) delivered.push(page.length);
    })();

    await expect(listing).rejects.toHaveProperty('context.reason', 'gone');
    await expect(listing).rejects.toThrow(/expired after 1 page had been delivered.*start the listing over/);
    expect(delivered).toEqual([2]);
  });

  it('rejects with reason notFound when a core collection is missing', async () => {
    server.fail({ kind: 'status', code: 404, reason: 'NotFound' }, { resource: 'pods' });

    const listing = collect(sourceFor().pages('Pod'));

    await expect(listing).rejects.toHaveProperty('context.reason', 'notFound');
  });

  it('rejects with reason server naming the kind when a later page fails', async () => {
    server.putObjects([object('Job', 'team-a', 'a'), object('Job', 'team-a', 'b'), object('Job', 'team-a', 'c')]);
    server.fail({ kind: 'status', code: 500 }, { on: 'continue', resource: 'jobs' });

    const listing = collect(sourceFor({ pageSize: 2 }).pages('Job'));

    await expect(listing).rejects.toHaveProperty('context.reason', 'server');
    await expect(listing).rejects.toHaveProperty('context.kind', 'Job');
    await expect(listing).rejects.toThrow(/^listing jobs\.batch in all namespaces failed: 500/);
  });

  it('rejects with reason unauthorized when the server refuses the token', async () => {
    const listing = collect(sourceFor({ token: 'wrong-token' }).pages('Deployment'));

    await expect(listing).rejects.toHaveProperty('context.reason', 'unauthorized');
  });

  it('rejects with reason malformed when the server repeats a continue token', async () => {
    server.putObjects(pods('team-a', 3));
    const looping = JSON.stringify({ metadata: { resourceVersion: '9', continue: 'again' }, items: [] });
    server.fail({ kind: 'raw', body: looping }, { on: 'continue' });

    const listing = collect(sourceFor({ pageSize: 1 }).pages('Pod'));

    await expect(listing).rejects.toHaveProperty('context.reason', 'malformed');
    await expect(listing).rejects.toThrow(/repeats an earlier continue token/);
  });

  it('rejects with a ConfigurationError when the namespace is not a namespace name', async () => {
    const listing = collect(sourceFor().pages('Pod', 'Not_A_Namespace'));

    await expect(listing).rejects.toThrow(ConfigurationError);
    await expect(listing).rejects.toThrow(/namespace "Not_A_Namespace" is not a namespace name/);
  });

  it.each([0, 5001, 2.5])('rejects page size %s with a ConfigurationError naming the range', (pageSize) => {
    expect(() => sourceFor({ pageSize })).toThrow(ConfigurationError);
    expect(() => sourceFor({ pageSize })).toThrow(`list page size must be an integer from 1 to 5000, got ${pageSize}`);
  });
});
