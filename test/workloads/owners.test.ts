/** The owner chain of a running Pod to the workload whose current template a rollout would use. */
import { describe, expect, it } from 'vitest';
import {
  createOwnerIndex,
  readPodIdentity,
  readWorkloadObject,
  type OwnerIndex,
  type PodOrigin,
} from '../../lib/workloads/index.ts';
import { findItem, fixtureList, type KubectlList } from '../report/support.ts';

function indexOf(list: KubectlList, except: readonly string[] = []): OwnerIndex {
  const index = createOwnerIndex();
  list.items.forEach((item, position) => {
    const name = `${item.kind as string}/${(item.metadata as { name: string }).name}`;
    if (item.kind !== 'Pod' && !except.includes(name)) index.add(readWorkloadObject(item, `items[${position}]`));
  });
  return index;
}

function originOf(podName: string, list = fixtureList(), except: readonly string[] = []): PodOrigin {
  return indexOf(list, except).resolve(readPodIdentity(findItem(list, 'Pod', podName), podName));
}

function templateOf(origin: PodOrigin): { kind: string; name: string; options: unknown } {
  if (origin.origin !== 'template') throw new Error(`expected a template, got ${JSON.stringify(origin)}`);
  return { kind: origin.workload.kind, name: origin.workload.name, options: origin.options };
}

describe('the owner chain of a running Pod', () => {
  it("goes from a Pod through its ReplicaSet to the Deployment, keeping the Pod's template hash", () => {
    expect(templateOf(originOf('web-5d8f7c9b4-k8x2q'))).toEqual({
      kind: 'Deployment',
      name: 'web',
      options: { namespace: 'production', templateHash: '5d8f7c9b4' },
    });
  });

  it('goes from a Pod through its ReplicaSet to the Argo Rollout', () => {
    expect(templateOf(originOf('storefront-6b7c8d9f5-w2n8d'))).toEqual({
      kind: 'Rollout',
      name: 'storefront',
      options: { namespace: 'production', templateHash: '6b7c8d9f5' },
    });
  });

  it("goes from a Pod to its StatefulSet, keeping the Pod's name and revision hash", () => {
    expect(templateOf(originOf('ledger-1'))).toEqual({
      kind: 'StatefulSet',
      name: 'ledger',
      options: { namespace: 'production', podName: 'ledger-1', templateHash: '6c8f7d9b5' },
    });
  });

  it("goes from a Pod through its Job to the CronJob, at the Job's scheduled minute", () => {
    expect(templateOf(originOf('nightly-report-29412345-x9k2m'))).toEqual({
      kind: 'CronJob',
      name: 'nightly-report',
      options: { namespace: 'batch', scheduledTime: 29_412_345 * 60_000 },
    });
  });

  it('uses a Job without a controller as the workload', () => {
    const list = fixtureList();
    const job = findItem(list, 'Job', 'nightly-report-29412345');
    (job.metadata as Record<string, unknown>).ownerReferences = [];

    expect(templateOf(originOf('nightly-report-29412345-x9k2m', list)).kind).toBe('Job');
  });

  it('says a DaemonSet Pod is one', () => {
    expect(originOf('node-exporter-q7w2x')).toEqual({ origin: 'daemonset' });
  });

  it('keeps a Pod without a controller as it is', () => {
    expect(originOf('toolbox')).toEqual({ origin: 'pod', reason: 'it has no controller' });
  });

  it('keeps the running Pod when its ReplicaSet is not in the input', () => {
    expect(originOf('web-5d8f7c9b4-k8x2q', fixtureList(), ['ReplicaSet/web-5d8f7c9b4'])).toEqual({
      origin: 'pod',
      reason: 'its owner ReplicaSet production/web-5d8f7c9b4 is not in the input',
    });
  });

  it('keeps the running Pod when the Deployment of its ReplicaSet is not in the input', () => {
    expect(originOf('web-5d8f7c9b4-k8x2q', fixtureList(), ['Deployment/web'])).toEqual({
      origin: 'pod',
      reason: 'its owner Deployment production/web is not in the input',
    });
  });

  it('takes an owner of another uid for another object', () => {
    const list = fixtureList();
    (findItem(list, 'ReplicaSet', 'web-5d8f7c9b4').metadata as Record<string, unknown>).uid = 'recreated';

    expect(originOf('web-5d8f7c9b4-k8x2q', list)).toMatchObject({ origin: 'pod' });
  });

  it('finds an owner only in the namespace of the Pod', () => {
    const list = fixtureList();
    (findItem(list, 'Pod', 'web-5d8f7c9b4-k8x2q').metadata as Record<string, unknown>).namespace = 'staging';

    expect(originOf('web-5d8f7c9b4-k8x2q', list)).toMatchObject({ origin: 'pod' });
  });

  it('drops the templates of ReplicaSets that have a controller, and keeps those of the workloads', () => {
    const index = indexOf(fixtureList());
    const reference = (kind: string, name: string) => ({ apiVersion: '', kind, name, uid: '' });

    expect(index.find('production', reference('ReplicaSet', 'web-5d8f7c9b4'))?.template).toBeUndefined();
    expect(index.find('production', reference('Deployment', 'web'))?.template).toBeDefined();
  });
});
