/** The Pod a controller would create from a workload's current template. */
import { describe, expect, it } from 'vitest';
import { podFacts } from '../../lib/engine/index.ts';
import { podFromWorkload, readWorkloadObject } from '../../lib/workloads/index.ts';
import { findItem, fixtureList } from '../report/support.ts';
import { type WorkloadObject } from '../../lib/workloads/objects.ts';
import { templateHash } from '../../lib/workloads/pod.ts';

const LIST = fixtureList();

function workload(kind: string, name: string): WorkloadObject {
  return readWorkloadObject(findItem(LIST, kind, name), `${kind} ${name}`);
}

const TEMPLATE = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } };

function object(
  kind: string,
  apiVersion: string,
  spec: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): WorkloadObject {
  return readWorkloadObject(
    { apiVersion, kind, metadata: { name: 'web', namespace: 'shop', uid: 'u-1', ...metadata }, spec },
    'object',
  );
}

describe('podFromWorkload', () => {
  it('creates a Deployment Pod through the ReplicaSet <name>-<hash>, labelled with pod-template-hash', () => {
    const pod = podFromWorkload(workload('Deployment', 'web'), { namespace: 'production', templateHash: '5d8f7c9b4' });

    expect(pod.metadata).toEqual({
      generateName: 'web-5d8f7c9b4-',
      namespace: 'production',
      labels: { app: 'web', 'pod-template-hash': '5d8f7c9b4' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-5d8f7c9b4',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(pod.spec).toBe((findItem(LIST, 'Deployment', 'web').spec as { template: { spec: unknown } }).template.spec);
  });

  it("derives a stable hash in the controllers' alphabet when the running hash is not given", () => {
    const first = podFromWorkload(object('Deployment', 'apps/v1', { template: TEMPLATE }), { namespace: 'shop' });
    const again = podFromWorkload(
      object('Deployment', 'apps/v1', { template: { spec: TEMPLATE.spec, metadata: { labels: { app: 'web' } } } }),
      { namespace: 'shop' },
    );
    const other = podFromWorkload(
      object('Deployment', 'apps/v1', { template: { ...TEMPLATE, metadata: { labels: { app: 'web', tier: 'x' } } } }),
      { namespace: 'shop' },
    );

    const hash = first.metadata?.labels?.['pod-template-hash'];
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    expect(again.metadata?.labels?.['pod-template-hash']).toBe(hash);
    expect(other.metadata?.labels?.['pod-template-hash']).not.toBe(hash);
  });

  it('creates a Rollout Pod labelled with rollouts-pod-template-hash', () => {
    const pod = podFromWorkload(workload('Rollout', 'storefront'), {
      namespace: 'production',
      templateHash: '6b7c8d9f5',
    });

    expect(pod.metadata?.generateName).toBe('storefront-6b7c8d9f5-');
    expect(pod.metadata?.labels).toEqual({ app: 'storefront', 'rollouts-pod-template-hash': '6b7c8d9f5' });
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: 'storefront-6b7c8d9f5' });
  });

  it("takes a Rollout's template from the Deployment its workloadRef names", () => {
    const rollout = object('Rollout', 'argoproj.io/v1alpha1', {
      workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    });
    const deployment = object('Deployment', 'apps/v1', { template: TEMPLATE });

    const pod = podFromWorkload(rollout, { namespace: 'shop', templateHash: 'abc', referencedTemplate: deployment });

    expect(pod.metadata?.labels).toEqual({ app: 'web', 'rollouts-pod-template-hash': 'abc' });
    expect(pod.spec).toBe(TEMPLATE.spec);
  });

  it('refuses a Rollout whose workloadRef template is not given, naming the object', () => {
    const rollout = object('Rollout', 'argoproj.io/v1alpha1', { workloadRef: { kind: 'Deployment', name: 'web' } });

    expect(() => podFromWorkload(rollout, { namespace: 'shop' })).toThrow('object: Rollout "web" has no Pod template');
  });

  it('names a StatefulSet Pod <name>-<ordinal> with its revision, pod-name and pod-index labels and network identity', () => {
    const pod = podFromWorkload(workload('StatefulSet', 'ledger'), {
      namespace: 'production',
      podName: 'ledger-1',
      templateHash: '6c8f7d9b5',
    });

    expect(pod.metadata?.name).toBe('ledger-1');
    expect(pod.metadata?.generateName).toBeUndefined();
    expect(pod.metadata?.labels).toEqual({
      app: 'ledger',
      'controller-revision-hash': 'ledger-6c8f7d9b5',
      'statefulset.kubernetes.io/pod-name': 'ledger-1',
      'apps.kubernetes.io/pod-index': '1',
    });
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'StatefulSet',
      name: 'ledger',
      uid: '7f9b1d3f-5a7c-4f9b-9d3f-5a7c9e1b3da6',
    });
    expect(pod.spec).toMatchObject({ hostname: 'ledger-1', subdomain: 'ledger' });
  });

  it("starts a StatefulSet's ordinals at spec.ordinals.start when no Pod name is given", () => {
    const pod = podFromWorkload(object('StatefulSet', 'apps/v1', { template: TEMPLATE, ordinals: { start: 5 } }), {
      namespace: 'shop',
    });

    expect(pod.metadata?.name).toBe('web-5');
  });

  it("builds a Job Pod that admission resolves to the Job when the name is not a CronJob's", () => {
    const pod = podFromWorkload(object('Job', 'batch/v1', { template: TEMPLATE }), { namespace: 'shop' });

    expect(podFacts(pod, 'shop').workload).toEqual({ kind: 'Job', name: 'web', namespace: 'shop' });
  });

  it('labels a Job Pod with the job-name and controller-uid labels, the legacy ones beside them', () => {
    const pod = podFromWorkload(object('Job', 'batch/v1', { template: TEMPLATE }), { namespace: 'shop' });

    expect(pod.metadata?.generateName).toBe('web-');
    expect(pod.metadata?.labels).toEqual({
      app: 'web',
      'batch.kubernetes.io/job-name': 'web',
      'job-name': 'web',
      'batch.kubernetes.io/controller-uid': 'u-1',
      'controller-uid': 'u-1',
    });
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: 'web',
      uid: 'u-1',
    });
  });

  it('creates a CronJob Pod through the Job <name>-<minutes since the epoch> of the given schedule time', () => {
    const pod = podFromWorkload(workload('CronJob', 'nightly-report'), {
      namespace: 'batch',
      scheduledTime: 29_412_345 * 60_000,
    });

    expect(pod.metadata?.generateName).toBe('nightly-report-29412345-');
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Job', name: 'nightly-report-29412345' });
    expect(pod.metadata?.labels).toMatchObject({ 'job-name': 'nightly-report-29412345' });
  });

  it("schedules a CronJob's Job at its last schedule time when no time is given", () => {
    const pod = podFromWorkload(workload('CronJob', 'nightly-report'), { namespace: 'batch' });

    expect(pod.metadata?.generateName).toBe(`nightly-report-${Date.parse('2025-12-03T02:45:00Z') / 60_000}-`);
  });

  it('makes a ReplicaSet without a controller the owner of its own Pods', () => {
    const pod = podFromWorkload(object('ReplicaSet', 'apps/v1', { template: TEMPLATE }), { namespace: 'shop' });

    expect(pod.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: 'web',
        uid: 'u-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it.each([
    ['Deployment', 'web', 'Deployment', 'web'],
    ['Rollout', 'storefront', 'Rollout', 'storefront'],
    ['StatefulSet', 'ledger', 'StatefulSet', 'ledger'],
    ['CronJob', 'nightly-report', 'CronJob', 'nightly-report'],
    // The CronJob controller's Job name says its CronJob, and admission reads it so.
    ['Job', 'nightly-report-29412345', 'CronJob', 'nightly-report'],
    ['DaemonSet', 'node-exporter', 'DaemonSet', 'node-exporter'],
  ])('builds a %s Pod that admission resolves to its workload', (kind, name, resolvedKind, resolvedName) => {
    const pod = podFromWorkload(workload(kind, name), { namespace: 'production' });

    expect(podFacts(pod, 'production').workload).toEqual({
      kind: resolvedKind,
      name: resolvedName,
      namespace: 'production',
    });
  });

  it('leaves the workload object as it was', () => {
    const item = findItem(fixtureList(), 'Deployment', 'web');
    const before = JSON.stringify(item);
    podFromWorkload(readWorkloadObject(item, 'web'), { namespace: 'production' });

    expect(JSON.stringify(item)).toBe(before);
  });

  it('hashes templates alike whatever the order of their keys', () => {
    const template = workload('Deployment', 'web').template!;
    const reordered = { ...template, spec: Object.fromEntries(Object.entries(template.spec!).reverse()) };

    expect(templateHash(reordered)).toBe(templateHash(template));
  });
});
