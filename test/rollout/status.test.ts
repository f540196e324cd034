import { describe, expect, it } from 'vitest';

import { readPodReadiness, readProgress, readWorkloadShape } from '../../lib/rollout/status.ts';

const PROGRESSING = {
  type: 'Progressing',
  status: 'True',
  reason: 'NewReplicaSetAvailable',
  message: 'ReplicaSet "api-5d8f" has successfully progressed.',
};

// Status objects as the controllers write them (kubectl get -o json), trimmed to the fields rollout status reads.
describe('readProgress, as kubectl rollout status reads a Deployment', () => {
  it.each([
    {
      case: 'complete',
      object: {
        metadata: { generation: 3 },
        spec: { replicas: 2 },
        status: {
          observedGeneration: 3,
          replicas: 2,
          updatedReplicas: 2,
          readyReplicas: 2,
          availableReplicas: 2,
          conditions: [PROGRESSING],
        },
      },
      progress: { state: 'done' },
    },
    {
      case: 'not yet observed',
      object: {
        metadata: { generation: 4 },
        spec: { replicas: 2 },
        status: { observedGeneration: 3, replicas: 2, updatedReplicas: 2, availableReplicas: 2 },
      },
      progress: { state: 'progressing', detail: 'waiting for the Deployment controller to observe generation 4' },
    },
    {
      case: 'updating',
      object: {
        metadata: { generation: 4 },
        spec: { replicas: 2 },
        status: { observedGeneration: 4, replicas: 3, updatedReplicas: 1, availableReplicas: 2 },
      },
      progress: { state: 'progressing', detail: '1 of 2 new replicas updated' },
    },
    {
      case: 'old replicas terminating',
      object: {
        metadata: { generation: 4 },
        spec: { replicas: 2 },
        status: { observedGeneration: 4, replicas: 3, updatedReplicas: 2, availableReplicas: 2 },
      },
      progress: { state: 'progressing', detail: '1 old replicas pending termination' },
    },
    {
      case: 'updated but not available',
      object: {
        metadata: { generation: 4 },
        spec: { replicas: 2 },
        status: { observedGeneration: 4, replicas: 2, updatedReplicas: 2, availableReplicas: 1 },
      },
      progress: { state: 'progressing', detail: '1 of 2 updated replicas available' },
    },
    {
      case: 'past its progress deadline',
      object: {
        metadata: { generation: 4 },
        spec: { replicas: 1 },
        status: {
          observedGeneration: 4,
          replicas: 2,
          updatedReplicas: 1,
          conditions: [
            {
              type: 'Progressing',
              status: 'False',
              reason: 'ProgressDeadlineExceeded',
              message: 'ReplicaSet "broken-7c9" has timed out progressing.',
            },
          ],
        },
      },
      progress: {
        state: 'failed',
        reason: 'progress deadline exceeded: ReplicaSet "broken-7c9" has timed out progressing.',
      },
    },
    {
      case: 'replicas defaulted to 1',
      object: {
        metadata: { generation: 1 },
        spec: {},
        status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
      },
      progress: { state: 'done' },
    },
  ])('$case', ({ object, progress }) => {
    expect(readProgress('Deployment', object, 'Deployment p/api')).toEqual(progress);
  });
});

describe('readProgress of a StatefulSet, a DaemonSet and an Argo Rollout', () => {
  it.each([
    {
      kind: 'StatefulSet',
      case: 'complete',
      object: {
        metadata: { generation: 2 },
        spec: { replicas: 2 },
        status: {
          observedGeneration: 2,
          replicas: 2,
          readyReplicas: 2,
          updatedReplicas: 2,
          currentRevision: 'db-6b',
          updateRevision: 'db-6b',
        },
      },
      state: 'done',
    },
    {
      kind: 'StatefulSet',
      case: 'revisions differ',
      object: {
        metadata: { generation: 2 },
        spec: { replicas: 2 },
        status: {
          observedGeneration: 2,
          replicas: 2,
          readyReplicas: 2,
          updatedReplicas: 1,
          currentRevision: 'db-5a',
          updateRevision: 'db-6b',
        },
      },
      state: 'progressing',
    },
    {
      kind: 'StatefulSet',
      case: 'a Pod not ready',
      object: {
        metadata: { generation: 2 },
        spec: { replicas: 2 },
        status: {
          observedGeneration: 2,
          replicas: 2,
          readyReplicas: 1,
          updatedReplicas: 2,
          currentRevision: 'db-6b',
          updateRevision: 'db-6b',
        },
      },
      state: 'progressing',
    },
    {
      kind: 'DaemonSet',
      case: 'complete',
      object: {
        metadata: { generation: 5 },
        status: {
          observedGeneration: 5,
          desiredNumberScheduled: 3,
          updatedNumberScheduled: 3,
          numberAvailable: 3,
          numberReady: 3,
        },
      },
      state: 'done',
    },
    {
      kind: 'DaemonSet',
      case: 'updating',
      object: {
        metadata: { generation: 5 },
        status: { observedGeneration: 5, desiredNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3 },
      },
      state: 'progressing',
    },
    {
      kind: 'DaemonSet',
      case: 'not available',
      object: {
        metadata: { generation: 5 },
        status: { observedGeneration: 5, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2 },
      },
      state: 'progressing',
    },
    {
      kind: 'Rollout',
      case: 'healthy, observedGeneration a string',
      object: {
        metadata: { generation: 7 },
        spec: { replicas: 2 },
        status: { observedGeneration: '7', phase: 'Healthy', replicas: 2, updatedReplicas: 2, availableReplicas: 2 },
      },
      state: 'done',
    },
    {
      kind: 'Rollout',
      case: 'healthy but not yet observed',
      object: {
        metadata: { generation: 8 },
        spec: { replicas: 2 },
        status: { observedGeneration: '7', phase: 'Healthy', replicas: 2, updatedReplicas: 2, availableReplicas: 2 },
      },
      state: 'progressing',
    },
    {
      kind: 'Rollout',
      case: 'healthy, but not every Pod older than spec.restartAt replaced yet',
      object: {
        metadata: { generation: 9 },
        spec: { replicas: 2, restartAt: '2026-12-04T10:00:00Z' },
        status: { observedGeneration: '9', phase: 'Healthy', updatedReplicas: 2, availableReplicas: 2 },
      },
      state: 'progressing',
    },
    {
      kind: 'Rollout',
      case: 'healthy, its restart copied to status.restartedAt',
      object: {
        metadata: { generation: 9 },
        spec: { replicas: 2, restartAt: '2026-12-04T10:00:00Z' },
        status: {
          observedGeneration: '9',
          phase: 'Healthy',
          updatedReplicas: 2,
          availableReplicas: 2,
          restartedAt: '2026-12-04T10:00:00Z',
        },
      },
      state: 'done',
    },
    {
      kind: 'Rollout',
      case: 'degraded',
      object: {
        metadata: { generation: 7 },
        spec: { replicas: 2 },
        status: { observedGeneration: '7', phase: 'Degraded', message: 'ProgressDeadlineExceeded' },
      },
      state: 'failed',
    },
  ] as const)('$kind $case: $state', ({ kind, object, state }) => {
    expect(readProgress(kind, object, `${kind} p/x`).state).toBe(state);
  });

  it('names the field of a status that is not well formed', () => {
    expect(() =>
      readProgress(
        'Deployment',
        { metadata: { generation: 1 }, status: { observedGeneration: 1, updatedReplicas: 'two' } },
        'Deployment p/api',
      ),
    ).toThrow('Deployment p/api.status.updatedReplicas: expected an integer, got');
  });
});

describe('readWorkloadShape and readPodReadiness', () => {
  it('reads the template labels and the update strategy, RollingUpdate by default', () => {
    expect(
      readWorkloadShape(
        'StatefulSet',
        { metadata: { generation: 2 }, spec: { template: { metadata: { labels: { app: 'db' } } } } },
        'x',
      ),
    ).toEqual({
      generation: 2,
      templateLabels: { app: 'db' },
      updateStrategy: 'RollingUpdate',
      workloadRef: undefined,
    });
    expect(
      readWorkloadShape('StatefulSet', { spec: { updateStrategy: { type: 'OnDelete' } } }, 'x').updateStrategy,
    ).toBe('OnDelete');
  });

  it('reads the workloadRef of a Rollout that takes its template from a Deployment', () => {
    const rollout = { spec: { workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web-template' } } };

    expect(readWorkloadShape('Rollout', rollout, 'x')).toMatchObject({
      templateLabels: {},
      workloadRef: { kind: 'Deployment', name: 'web-template' },
    });
  });

  it.each([
    {
      case: 'Ready',
      pod: { metadata: { uid: 'u1' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      ready: true,
    },
    {
      case: 'not Ready',
      pod: { metadata: { uid: 'u1' }, status: { conditions: [{ type: 'Ready', status: 'False' }] } },
      ready: false,
    },
    {
      case: 'Ready but being deleted',
      pod: {
        metadata: { uid: 'u1', deletionTimestamp: '2026-12-03T15:00:00Z' },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      },
      ready: false,
    },
    { case: 'without status', pod: { metadata: { uid: 'u1' } }, ready: false },
  ])('reads a Pod $case', ({ pod, ready }) => {
    expect(readPodReadiness(pod, 'Pod p/db-0')).toEqual({ uid: 'u1', ready });
  });
});
