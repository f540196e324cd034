/**
 * One cluster per cluster id: the sync binds the id to the cluster's kube-system uid on its first publish and refuses
 * any other cluster, publishing nothing and leaving the bound cluster's snapshot (the fake API server turned into
 * another cluster with setClusterUid), until a re-bind names the bound uid.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncReport } from '../../lib/sync/index.ts';
import { contentOf, ruleAdding } from '../store/support.ts';
import { manualClock, syncSubject, useSyncWorld, validSpec, type SyncSubject } from './support.ts';

const world = useSyncWorld();
let original: string | undefined;

/** Makes the fake API server another cluster until the test ends. */
function becomeAnotherCluster(): string {
  original ??= world.server.clusterUid;
  const uid = randomUUID();
  world.server.setClusterUid(uid);
  return uid;
}

afterEach(() => {
  if (original !== undefined) world.server.setClusterUid(original);
  original = undefined;
});

/** A subject whose first sync published one rule for the fake API server's cluster, and that cluster's uid. */
async function boundSubject(): Promise<{ readonly subject: SyncSubject; readonly bound: string }> {
  world.server.put({ metadata: { name: 'first-rule' }, spec: validSpec('first') });
  const subject = syncSubject(world, { clock: manualClock() });
  const first = await subject.sync();
  expect(first).toMatchObject({ outcome: 'published', binding: 'bound', clusterUid: world.server.clusterUid });
  return { subject, bound: world.server.clusterUid };
}

/** What the table holds for the subject's cluster id: the snapshot's pointer and its rule names, the binding. */
async function stored(subject: SyncSubject) {
  return {
    pointer: await world.store(subject.clusterId).readPointer(),
    rules: (await world.store(subject.clusterId).read())?.rules.map((rule) => rule.name),
    binding: await world.bindings(subject.clusterId).read(),
  };
}

function expectRefused(report: SyncReport): void {
  expect(report).toMatchObject({ outcome: 'failed', failedStep: 'identity', statusPatched: 0 });
}

describe('the first publish of a cluster id', () => {
  it('binds it to the uid of the cluster’s kube-system namespace, as the sync that bound it, by the table’s clock', async () => {
    const before = Date.now();
    const { subject, bound } = await boundSubject();

    const binding = (await stored(subject)).binding;
    expect(binding).toEqual({ clusterUid: bound, boundAt: expect.any(String) as unknown, boundBy: 'lambda:test' });
    expect(Date.parse(binding?.boundAt ?? '')).toBeGreaterThanOrEqual(before);
  });

  it('leaves the binding out of the report of every later sync of the same cluster', async () => {
    const { subject, bound } = await boundSubject();

    const again = await subject.sync();

    expect(again).toMatchObject({ outcome: 'unchanged', clusterUid: bound });
    expect(again.binding).toBeUndefined();
  });

  it('binds a table whose snapshots predate bindings on its next publish', async () => {
    world.server.put({ metadata: { name: 'first-rule' }, spec: validSpec('first') });
    const subject = syncSubject(world, { clock: manualClock() });
    // What a version without bindings left: a snapshot, and no binding item.
    await world.store(subject.clusterId).publish(contentOf([ruleAdding('older-rule', { 'example.com/a': 'b' })]));

    const next = await subject.sync();

    expect(next).toMatchObject({ outcome: 'published', binding: 'bound', version: 2 });
    expect(await stored(subject)).toMatchObject({
      rules: ['first-rule'],
      binding: { clusterUid: world.server.clusterUid },
    });
  });
});

describe('a sync of another cluster under a bound cluster id', () => {
  it('is refused, naming both uids, the cluster id and the table, and how to re-bind', async () => {
    const { subject, bound } = await boundSubject();
    const boundAt = (await stored(subject)).binding?.boundAt ?? '';
    const other = becomeAnotherCluster();

    const report = await subject.sync();

    expectRefused(report);
    expect(report.clusterUid).toBe(other);
    expect(report.error).toBe(
      `refused to publish for cluster "${subject.clusterId}" in table "${world.tableName}": the cluster id is bound to the cluster whose kube-system namespace has uid ${bound} (bound ${boundAt} by lambda:test), but this sync's cluster has kube-system uid ${other}. ` +
        `Nothing was published; the snapshot of ${bound} stays. If this cluster replaces that one on purpose, re-bind with a kubeconfig of this cluster: podmutation sync --once --rebind-from ${bound} (docs/operations.md, "One cluster per cluster id")`,
    );
  });

  it('publishes nothing, writes no status to that cluster and leaves the bound cluster’s snapshot', async () => {
    const { subject } = await boundSubject();
    const before = await stored(subject);
    becomeAnotherCluster();
    world.server.put({ metadata: { name: 'second-rule' }, spec: validSpec('second') });
    const patches = world.server.statusPatches.length;

    expectRefused(await subject.sync());

    expect(await stored(subject)).toEqual(before);
    expect(world.server.statusPatches.length).toBe(patches);
  });

  it('counts as a sync error, records the failure and logs it as one', async () => {
    const { subject } = await boundSubject();
    becomeAnotherCluster();

    const report = await subject.sync();

    expect(subject.recorder.emitted).toContainEqual({ name: 'SyncErrors', unit: 'Count', value: 1 });
    expect(subject.recorder.emitted).toContainEqual({ name: 'SnapshotPublished', unit: 'Count', value: 0 });
    expect(await world.records(subject.clusterId).readSyncStatus()).toMatchObject({
      lastStatus: 'failed',
      lastError: report.error,
    });
    expect(subject.recorder.logs.at(-1)).toMatchObject({
      level: 'error',
      message: 'sync failed; nothing was published and the last snapshot stays current',
      fields: { failedStep: 'identity', errorReason: 'identityMismatch' },
    });
  });
});

describe('a re-bind on purpose (rebindFrom)', () => {
  it('moves the cluster id to this cluster when it names the bound uid, and publishes this cluster’s rules', async () => {
    const { subject, bound } = await boundSubject();
    const other = becomeAnotherCluster();
    world.server.remove('first-rule');
    world.server.put({ metadata: { name: 'second-rule' }, spec: validSpec('second') });

    const report = await subject.sync({
      binding: { store: world.bindings(subject.clusterId), owner: 'cli:laptop:7', rebindFrom: bound },
    });

    expect(report).toMatchObject({ outcome: 'published', binding: 'rebound', clusterUid: other, version: 2 });
    expect(await stored(subject)).toMatchObject({
      rules: ['second-rule'],
      binding: { clusterUid: other, previousUid: bound, boundBy: 'cli:laptop:7' },
    });
  });

  it('is refused when it names another uid than the bound one, changing nothing', async () => {
    const { subject, bound } = await boundSubject();
    const before = await stored(subject);
    becomeAnotherCluster();
    const typo = randomUUID();

    const report = await subject.sync({
      binding: { store: world.bindings(subject.clusterId), owner: 'cli:laptop:7', rebindFrom: typo },
    });

    expectRefused(report);
    expect(report.error).toContain(`--rebind-from names ${typo}, which is not the uid it is bound to`);
    expect(report.error).toContain(`bound to the cluster whose kube-system namespace has uid ${bound}`);
    expect(await stored(subject)).toEqual(before);
  });

  it('is refused for a cluster id bound to nothing, which a plain sync binds', async () => {
    world.server.put({ metadata: { name: 'first-rule' }, spec: validSpec('first') });
    const subject = syncSubject(world);

    const report = await subject.sync({
      binding: { store: world.bindings(subject.clusterId), owner: 'cli:laptop:7', rebindFrom: randomUUID() },
    });

    expectRefused(report);
    expect(report.error).toContain('it is bound to no cluster yet');
    expect(await stored(subject)).toEqual({ pointer: undefined, rules: undefined, binding: undefined });
  });

  it('publishes as a plain sync when the cluster id is bound to this cluster already', async () => {
    const { subject, bound } = await boundSubject();

    const report = await subject.sync({
      binding: { store: world.bindings(subject.clusterId), owner: 'cli:laptop:7', rebindFrom: randomUUID() },
    });

    expect(report).toMatchObject({ outcome: 'unchanged', clusterUid: bound });
    expect((await stored(subject)).binding?.boundBy).toBe('lambda:test');
  });
});

describe('a cluster whose identity cannot be read', () => {
  it.each([
    {
      name: 'the identity lacks get on the kube-system namespace (403, infra/rbac.yaml not applied)',
      fault: { kind: 'status', code: 403, reason: 'Forbidden' } as const,
      error:
        /reading the uid of namespace kube-system, the cluster's identity failed: 403 Forbidden .*infra\/rbac\.yaml/,
    },
    {
      name: 'the answer carries no uid',
      fault: { kind: 'raw', body: JSON.stringify({ kind: 'Namespace', metadata: { name: 'kube-system' } }) } as const,
      error: /the answer has no metadata\.uid of the form a Kubernetes uid/,
    },
  ])('fails at the identity step and keeps the snapshot when $name', async ({ fault, error }) => {
    const { subject } = await boundSubject();
    const before = await stored(subject);
    world.server.fail(fault, { on: 'get', resource: 'namespaces' });

    const report = await subject.sync();

    expectRefused(report);
    expect(report.error).toMatch(error);
    expect(await stored(subject)).toEqual(before);
  });
});
