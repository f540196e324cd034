import { describe, expect, it } from 'vitest';
import { podFacts } from '../../lib/engine/index.ts';
import type { Pod } from '../../lib/engine/index.ts';

function ownedPod(
  owner: { kind: string; name: string; controller?: boolean } | undefined,
  labels: Record<string, string> = {},
  name?: string,
): Pod {
  return {
    metadata: {
      ...(name === undefined ? { generateName: `${owner?.name ?? 'standalone'}-` } : { name }),
      labels,
      ...(owner === undefined
        ? {}
        : {
            ownerReferences: [
              { apiVersion: 'apps/v1', kind: owner.kind, name: owner.name, controller: owner.controller ?? true },
            ],
          }),
    },
  };
}

describe('workload resolution', () => {
  it.each([
    [
      'a ReplicaSet named <name>-<pod-template-hash> resolves to its Deployment',
      ownedPod({ kind: 'ReplicaSet', name: 'checkout-7d9f8b6c5d' }, { 'pod-template-hash': '7d9f8b6c5d' }),
      'Deployment',
      'checkout',
    ],
    [
      'a Deployment name that itself ends in digits keeps them',
      ownedPod({ kind: 'ReplicaSet', name: 'api-v2-12345678-5d8f7c9b4' }, { 'pod-template-hash': '5d8f7c9b4' }),
      'Deployment',
      'api-v2-12345678',
    ],
    [
      'a ReplicaSet named <name>-<rollouts-pod-template-hash> resolves to its Rollout',
      ownedPod({ kind: 'ReplicaSet', name: 'canary-6f5c8d7b9' }, { 'rollouts-pod-template-hash': '6f5c8d7b9' }),
      'Rollout',
      'canary',
    ],
    [
      'a ReplicaSet whose name does not end in the hash stays a ReplicaSet',
      ownedPod({ kind: 'ReplicaSet', name: 'hand-made' }, { 'pod-template-hash': '5d8f7c9b4' }),
      'ReplicaSet',
      'hand-made',
    ],
    [
      'a ReplicaSet without a hash label stays a ReplicaSet',
      ownedPod({ kind: 'ReplicaSet', name: 'web-5d8f7c9b4' }),
      'ReplicaSet',
      'web-5d8f7c9b4',
    ],
    [
      'a Job named <name>-<8 or more digits> resolves to its CronJob',
      ownedPod({ kind: 'Job', name: 'nightly-report-29434560' }),
      'CronJob',
      'nightly-report',
    ],
    [
      'a Job with fewer than 8 trailing digits stays a Job',
      ownedPod({ kind: 'Job', name: 'migrate-1234567' }),
      'Job',
      'migrate-1234567',
    ],
    [
      'a StatefulSet owner is taken as it is',
      ownedPod({ kind: 'StatefulSet', name: 'postgres' }),
      'StatefulSet',
      'postgres',
    ],
    ['a custom controller owner is taken as it is', ownedPod({ kind: 'Workflow', name: 'etl' }), 'Workflow', 'etl'],
    [
      'a Pod without a controller owner is named by its name',
      ownedPod(undefined, {}, 'debug-shell'),
      'Pod',
      'debug-shell',
    ],
    [
      'a Pod without a controller owner or name is named by its generateName',
      ownedPod(undefined),
      'Pod',
      'standalone-',
    ],
    [
      'a non-controller owner reference is ignored',
      ownedPod({ kind: 'StatefulSet', name: 'postgres', controller: false }, {}, 'postgres-0'),
      'Pod',
      'postgres-0',
    ],
  ])('%s', (_, input, kind, name) => {
    expect(podFacts(input, 'production').workload).toEqual({ kind, name, namespace: 'production' });
  });
});
