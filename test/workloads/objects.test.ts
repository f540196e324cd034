/** Workload objects and Pod identities read from untrusted JSON: bad input is reported at its field path. */
import { describe, expect, it } from 'vitest';
import { MalformedInputError } from '../../lib/errors/index.ts';
import { classifyObject, readPodIdentity, readWorkloadObject } from '../../lib/workloads/index.ts';

const DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', uid: 'u-1' },
  spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web' }] } } },
};

function withSpec(spec: unknown): unknown {
  return { ...DEPLOYMENT, spec };
}

describe('classifyObject', () => {
  it.each([
    ['a Pod', { apiVersion: 'v1', kind: 'Pod' }, 'Pod'],
    ['a Deployment', DEPLOYMENT, 'Deployment'],
    ['an Argo Rollout', { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout' }, 'Rollout'],
    ['a CronJob', { apiVersion: 'batch/v1', kind: 'CronJob' }, 'CronJob'],
    ['a Service', { apiVersion: 'v1', kind: 'Service' }, undefined],
    ['a Deployment of another API group', { apiVersion: 'example.com/v1', kind: 'Deployment' }, undefined],
  ])('sorts %s', (_, value, expected) => {
    expect(classifyObject(value, 'items[0]')).toBe(expected);
  });

  it('refuses an object without a kind, naming the field', () => {
    expect(() => classifyObject({ apiVersion: 'v1' }, 'items[2]')).toThrow(
      'items[2].kind: expected the kind of the object, got nothing',
    );
  });

  it('refuses an item that is not an object', () => {
    expect(() => classifyObject('web', 'items[2]')).toThrow('items[2]: expected an object, got a string');
  });
});

describe('readWorkloadObject', () => {
  it('reads the identity, controller and template of a Deployment', () => {
    const object = readWorkloadObject(DEPLOYMENT, 'items[0]');

    expect(object).toMatchObject({
      kind: 'Deployment',
      namespace: 'shop',
      name: 'web',
      uid: 'u-1',
      controller: undefined,
      path: 'items[0]',
    });
    expect(object.template).toMatchObject({ labels: { app: 'web' }, annotations: {}, path: 'items[0].spec.template' });
  });

  it.each([
    [
      'a template that is not an object',
      withSpec({ template: 'web' }),
      'items[3].spec.template: expected an object (the Pod template), got a string',
    ],
    ['a missing template', withSpec({}), 'items[3].spec.template: expected an object (the Pod template), got nothing'],
    [
      'a label that is not a string',
      withSpec({ template: { metadata: { labels: { app: 7 } } } }),
      'items[3].spec.template.metadata.labels.app: expected a string, got a number',
    ],
    [
      'tolerations that are not a list',
      withSpec({ template: { spec: { tolerations: {} } } }),
      'items[3].spec.template.spec.tolerations: expected a list, got an object',
    ],
    [
      'a node affinity term that is not an object',
      withSpec({
        template: {
          spec: {
            affinity: {
              nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: ['x'] } },
            },
          },
        },
      }),
      'items[3].spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: expected an object, got a string',
    ],
    ['a spec that is a list', withSpec([]), 'items[3].spec: expected an object, got a list'],
    [
      'no name',
      { ...DEPLOYMENT, metadata: { namespace: 'shop' } },
      'items[3].metadata.name: expected a name, got nothing',
    ],
    [
      'an owner reference whose controller is a string',
      { ...DEPLOYMENT, metadata: { name: 'web', ownerReferences: [{ kind: 'X', name: 'x', controller: 'yes' }] } },
      'items[3].metadata.ownerReferences[0].controller: expected a boolean, got a string',
    ],
  ])('reports %s at its field path', (_, value, message) => {
    expect(() => readWorkloadObject(value, 'items[3]')).toThrow(
      expect.objectContaining({ name: MalformedInputError.name, message }),
    );
  });

  it("reports a CronJob's job template at its field path", () => {
    const cronJob = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly' },
      spec: { jobTemplate: { spec: { template: 3 } } },
    };

    expect(() => readWorkloadObject(cronJob, 'items[1]')).toThrow(
      'items[1].spec.jobTemplate.spec.template: expected an object (the Pod template), got a number',
    );
  });

  it('reports a last schedule time that is no time', () => {
    const cronJob = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly' },
      spec: { jobTemplate: { spec: { template: {} } } },
      status: { lastScheduleTime: 'yesterday' },
    };

    expect(() => readWorkloadObject(cronJob, 'items[1]')).toThrow(
      'items[1].status.lastScheduleTime: expected an RFC 3339 time, got "yesterday"',
    );
  });

  it('accepts a Rollout without a template when spec.workloadRef names one', () => {
    const rollout = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Rollout',
      metadata: { name: 'web' },
      spec: { workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } },
    };

    expect(readWorkloadObject(rollout, 'items[0]')).toMatchObject({
      template: undefined,
      workloadRef: { kind: 'Deployment', name: 'web' },
    });
  });

  describe("a StatefulSet's update strategy", () => {
    const statefulSet = (updateStrategy: unknown) => ({
      ...DEPLOYMENT,
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'shop' },
      spec: { ...DEPLOYMENT.spec, updateStrategy },
    });

    it.each([
      ['absent, as RollingUpdate without a partition', undefined, 'RollingUpdate', 0, false],
      ['OnDelete', { type: 'OnDelete' }, 'OnDelete', 0, false],
      ['RollingUpdate without rollingUpdate', { type: 'RollingUpdate' }, 'RollingUpdate', 0, false],
      [
        'a RollingUpdate partition',
        { type: 'RollingUpdate', rollingUpdate: { partition: 3 } },
        'RollingUpdate',
        3,
        true,
      ],
      ['a partition without a type, as RollingUpdate', { rollingUpdate: { partition: 2 } }, 'RollingUpdate', 2, true],
    ])('reads %s', (_case, updateStrategy, type, partition, rollingUpdate) => {
      expect(readWorkloadObject(statefulSet(updateStrategy), 'items[0]')).toMatchObject({
        updateStrategy: type,
        partition,
        rollingUpdate,
      });
    });

    it('reads the revisions its status names', () => {
      const status = { observedGeneration: 4, currentReplicas: 2, currentRevision: 'db-a', updateRevision: 'db-b' };

      expect(readWorkloadObject({ ...statefulSet(undefined), status }, 'items[0]').revisions).toEqual({
        current: 'db-a',
        update: 'db-b',
        currentReplicas: 2,
        observedGeneration: 4,
      });
    });

    it('reports a revision that is no string at its field path', () => {
      expect(() =>
        readWorkloadObject({ ...statefulSet(undefined), status: { currentRevision: 7 } }, 'items[5]'),
      ).toThrow('items[5].status.currentRevision: expected a string, got');
    });

    it('reads none for another kind', () => {
      expect(
        readWorkloadObject(
          { ...DEPLOYMENT, spec: { ...DEPLOYMENT.spec, updateStrategy: { type: 'Recreate' } } },
          'items[0]',
        ),
      ).toMatchObject({ updateStrategy: '', partition: 0 });
    });

    it('reports a partition that is no integer at its field path', () => {
      expect(() => readWorkloadObject(statefulSet({ rollingUpdate: { partition: '1' } }), 'items[4]')).toThrow(
        'items[4].spec.updateStrategy.rollingUpdate.partition: expected an integer, got a string',
      );
    });
  });

  it('refuses a Pod', () => {
    expect(() => readWorkloadObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, 'items[0]')).toThrow(
      'items[0]: expected a workload',
    );
  });
});

describe('readPodIdentity', () => {
  it('reads the controller reference of a Pod with its uid', () => {
    const pod = {
      metadata: {
        name: 'p',
        namespace: 'shop',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'u-2', controller: true }],
      },
    };

    expect(readPodIdentity(pod, 'items[0]').controller).toEqual({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'web-1',
      uid: 'u-2',
    });
  });

  it('reads the phase of a Pod', () => {
    expect(readPodIdentity({ metadata: { name: 'p' }, status: { phase: 'Succeeded' } }, 'items[0]').phase).toBe(
      'Succeeded',
    );
  });

  it('puts a Pod without a namespace in the default one', () => {
    expect(readPodIdentity({ metadata: { name: 'p' } }, 'items[0]').namespace).toBe('default');
  });

  it('reports labels that are not a map at their field path', () => {
    expect(() => readPodIdentity({ metadata: { labels: ['a'] } }, 'items[4]')).toThrow(
      'items[4].metadata.labels: expected an object, got a list',
    );
  });
});
