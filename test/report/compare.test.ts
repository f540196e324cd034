/** The scheduling of two Pods compared as Kubernetes reads it, and the change line it gives. */
import { describe, expect, it } from 'vitest';
import { podFacts, type Pod, type PodFacts } from '../../lib/engine/index.ts';

import { pod, preferred, req, termOf } from '../support/builders.ts';
import { MAX_CHANGE_CHARS, schedulingChange } from '../../lib/report/compare.ts';

function facts(value: Pod): PodFacts {
  return podFacts(value, 'production');
}

function change(rollout: Pod, running: Pod, annotationKeys: readonly string[] = []): string {
  return schedulingChange(facts(rollout), facts(running), annotationKeys) ?? '';
}

function withSpread(value: Pod, constraints: unknown[]): Pod {
  return { ...value, spec: { ...value.spec, topologySpreadConstraints: constraints } };
}

const SPOT = { key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' };
const GPU = { key: 'example.com/gpu', value: 'a100', effect: 'NoSchedule' };

describe('schedulingChange', () => {
  it('is empty when the scheduling fields are the same', () => {
    const value = pod({ nodeSelector: { pool: 'a' }, tolerations: [SPOT], required: [termOf(req('zone', 'In', 'a'))] });

    expect(change(value, value)).toBe('');
  });

  it('names the nodeSelector pairs a rollout removes and adds', () => {
    expect(
      change(
        pod({ nodeSelector: { pool: 'spot', arch: 'amd64' } }),
        pod({ nodeSelector: { pool: 'ondemand', arch: 'amd64' } }),
      ),
    ).toBe('nodeSelector: -pool=ondemand +pool=spot');
  });

  it('compares tolerations as a set: their order and repeats do not count', () => {
    expect(change(pod({ tolerations: [SPOT, GPU] }), pod({ tolerations: [GPU, SPOT, GPU] }))).toBe('');
  });

  it('reads an absent toleration operator as Equal', () => {
    expect(change(pod({ tolerations: [{ ...GPU, operator: 'Equal' }] }), pod({ tolerations: [GPU] }))).toBe('');
  });

  it('names the tolerations a rollout adds, with operator, effect and seconds', () => {
    const seconds = { key: 'example.com/maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 };

    expect(change(pod({ tolerations: [SPOT, GPU, seconds] }), pod({}))).toBe(
      'tolerations: +example.com/gpu=a100:NoSchedule +example.com/maintenance:NoExecute op=Exists for 60s +example.com/spot:NoSchedule op=Exists',
    );
  });

  it('compares required terms as ORed sets of ANDed requirements with value sets', () => {
    const rollout = pod({
      required: [termOf(req('zone', 'In', 'a', 'b'), req('arch', 'Exists')), termOf(req('pool', 'In', 'x'))],
    });
    const running = pod({
      required: [termOf(req('pool', 'In', 'x')), termOf(req('arch', 'Exists'), req('zone', 'In', 'b', 'a', 'a'))],
    });

    expect(change(rollout, running)).toBe('');
  });

  it('names the required terms a rollout replaces', () => {
    const rollout = pod({ required: [termOf(req('pool', 'In', 'merged'), req('arch', 'In', 'amd64'))] });
    const running = pod({ required: [termOf(req('pool', 'In', 'legacy'), req('arch', 'In', 'amd64'))] });

    expect(change(rollout, running)).toBe(
      'required node affinity (terms ORed): -{arch In [amd64], pool In [legacy]} +{arch In [amd64], pool In [merged]}',
    );
  });

  it('tells a required selector from none', () => {
    expect(change(pod({ required: [termOf(req('pool', 'In', 'x'))] }), pod({}))).toBe(
      'required node affinity (terms ORed): +{pool In [x]}',
    );
  });

  it('compares preferred terms by weight and term', () => {
    expect(
      change(
        pod({ preferred: [preferred(60, req('arch', 'In', 'arm64'))] }),
        pod({ preferred: [preferred(60, req('arch', 'In', 'arm64'))] }),
      ),
    ).toBe('');
    expect(
      change(
        pod({ preferred: [preferred(60, req('arch', 'In', 'arm64'))] }),
        pod({ preferred: [preferred(50, req('arch', 'In', 'arm64'))] }),
      ),
    ).toBe('preferred node affinity: -{weight 50: arch In [arm64]} +{weight 60: arch In [arm64]}');
  });

  it('names the spread constraints a rollout adds', () => {
    const spread = {
      maxSkew: 1,
      topologyKey: 'node.kubernetes.io/instance-type',
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: { app: 'web' } },
    };

    expect(change(withSpread(pod({}), [spread]), pod({}))).toBe(
      'topologySpreadConstraints: +topologyKey=node.kubernetes.io/instance-type maxSkew=1 whenUnsatisfiable=ScheduleAnyway labelSelector={"matchLabels":{"app":"web"}}',
    );
  });

  it('ignores the matchLabelKeys requirements the API server merges into a spread constraint', () => {
    const template = {
      maxSkew: 1,
      topologyKey: 'zone',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { app: 'web' } },
      matchLabelKeys: ['pod-template-hash'],
    };
    const merged = {
      ...template,
      labelSelector: {
        ...template.labelSelector,
        matchExpressions: [{ key: 'pod-template-hash', operator: 'In', values: ['5d8f7c9b4'] }],
      },
    };

    expect(change(withSpread(pod({}), [template]), withSpread(pod({}), [merged]))).toBe('');
  });

  it('compares only the annotations the matched rules set', () => {
    const rollout = pod({
      annotations: {
        'example.com/migration': 'merged-pool',
        'example.com/other': 'b',
        'podmutation.agent.cloudpilot.ai/applied': 'x',
      },
    });
    const running = pod({ annotations: { 'example.com/other': 'a' } });

    expect(change(rollout, running, ['example.com/migration'])).toBe(
      'annotations: +example.com/migration: merged-pool',
    );
  });

  it('names an annotation whose value a rollout changes', () => {
    expect(change(pod({ annotations: { team: 'b' } }), pod({ annotations: { team: 'a' } }), ['team'])).toBe(
      'annotations: -team: a +team: b',
    );
  });

  it('keeps the fields in a fixed order, separated by semicolons', () => {
    const rollout = pod({ nodeSelector: { pool: 'b' }, tolerations: [SPOT], annotations: { team: 'x' } });

    expect(change(rollout, pod({}), ['team'])).toBe(
      'nodeSelector: +pool=b; tolerations: +example.com/spot:NoSchedule op=Exists; annotations: +team: x',
    );
  });

  it(`cuts a long line at ${MAX_CHANGE_CHARS} characters`, () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, index) => [`example.com/key-${index}`, 'value']));
    const line = change(pod({ nodeSelector: many }), pod({}));

    expect(line).toHaveLength(MAX_CHANGE_CHARS);
    expect(line.endsWith('…')).toBe(true);
  });
});
