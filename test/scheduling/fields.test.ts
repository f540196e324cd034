/** The one scheduling view of a Pod: the fields read from it, and the annotations each caller counts. */
import { describe, expect, it } from 'vitest';
import { schedulingFieldsOf, type NodeAffinity, type Toleration } from '../../lib/scheduling/index.ts';

const POOL = 'example.com/node-pool';
const SPOT: Toleration = { key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' };
const AFFINITY: NodeAffinity = {
  requiredDuringSchedulingIgnoredDuringExecution: {
    nodeSelectorTerms: [{ matchExpressions: [{ key: POOL, operator: 'In', values: ['merged'] }] }],
  },
};
const SPREAD = { topologyKey: 'topology.kubernetes.io/zone', maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway' };

describe('schedulingFieldsOf', () => {
  it('reads the node selector, tolerations, node affinity, spread constraints and annotations of a Pod', () => {
    const pod = {
      metadata: { name: 'web-1', labels: { app: 'web' }, annotations: { team: 'payments' } },
      spec: {
        nodeName: '',
        nodeSelector: { [POOL]: 'merged' },
        tolerations: [SPOT],
        affinity: { nodeAffinity: AFFINITY, podAntiAffinity: { required: [] } },
        topologySpreadConstraints: [SPREAD],
        containers: [{ name: 'web', image: 'web:1' }],
      },
    };

    expect(schedulingFieldsOf(pod)).toEqual({
      annotations: { team: 'payments' },
      nodeSelector: { [POOL]: 'merged' },
      tolerations: [SPOT],
      nodeAffinity: AFFINITY,
      topologySpreadConstraints: [SPREAD],
    });
  });

  it.each([
    { name: 'a Pod without metadata or spec', pod: {} },
    { name: 'a Pod whose metadata, spec and affinity are null', pod: { metadata: null, spec: { affinity: null } } },
    { name: 'a Pod with an affinity of other kinds only', pod: { spec: { affinity: {} } } },
  ])('reads no field and no annotation of $name', ({ pod }) => {
    expect(schedulingFieldsOf(pod)).toEqual({
      annotations: {},
      nodeSelector: undefined,
      tolerations: undefined,
      nodeAffinity: undefined,
      topologySpreadConstraints: undefined,
    });
  });

  it('keeps only the annotations the caller counts', () => {
    const pod = { metadata: { annotations: { team: 'payments', 'agent.cloudpilot.ai/stamp': 'v1', owner: 'ops' } } };

    expect(schedulingFieldsOf(pod, (key) => !key.startsWith('agent.cloudpilot.ai/')).annotations).toEqual({
      team: 'payments',
      owner: 'ops',
    });
  });
});
