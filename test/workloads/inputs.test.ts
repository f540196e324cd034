/**
 * The Pods an input stands for name the document they came from: `podmutation test` results name
 * a resource as KIND/NAMESPACE/NAME.
 */
import { describe, expect, it } from 'vitest';
import { podInputs, type ResourceIdentity } from '../../lib/workloads/index.ts';
import { admissionReview, pod } from '../support/builders.ts';

const TEMPLATE = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web:1' }] } };

function workload(
  kind: string,
  apiVersion: string,
  metadata: Record<string, unknown>,
  spec: Record<string, unknown> = { template: TEMPLATE },
) {
  return { apiVersion, kind, metadata, spec };
}

describe('podInputs names the resource each Pod came from', () => {
  it.each<[string, unknown, ResourceIdentity]>([
    [
      'a named Pod in its namespace',
      pod({ name: 'web-0', namespace: 'shop' }),
      { kind: 'Pod', namespace: 'shop', name: 'web-0' },
    ],
    [
      'a Pod with only generateName, by its generateName',
      pod({ generateName: 'web-5d8f7c9b4-', namespace: 'shop' }),
      { kind: 'Pod', namespace: 'shop', name: 'web-5d8f7c9b4-' },
    ],
    [
      'a Pod without a namespace, in the fallback namespace',
      { kind: 'Pod', metadata: { name: 'debug' } },
      { kind: 'Pod', namespace: 'fallback', name: 'debug' },
    ],
    [
      "a document without a kind that has a Pod's spec.containers, as a Pod",
      { metadata: { name: 'bare', namespace: 'shop' }, spec: { containers: [{ name: 'app', image: 'app' }] } },
      { kind: 'Pod', namespace: 'shop', name: 'bare' },
    ],
    [
      'an AdmissionReview, by its request namespace and uid',
      admissionReview(pod({ namespace: 'shop' })),
      { kind: 'AdmissionReview', namespace: 'shop', name: 'b3a1d2c4-0e5f-4a6b-8c7d-9e0f1a2b3c4d' },
    ],
    [
      'a Deployment in its namespace',
      workload('Deployment', 'apps/v1', { name: 'web', namespace: 'shop' }),
      { kind: 'Deployment', namespace: 'shop', name: 'web' },
    ],
    [
      'a Deployment without a namespace, in the fallback namespace',
      workload('Deployment', 'apps/v1', { name: 'web' }),
      { kind: 'Deployment', namespace: 'fallback', name: 'web' },
    ],
    [
      'a CronJob',
      workload(
        'CronJob',
        'batch/v1',
        { name: 'nightly', namespace: 'batch' },
        { schedule: '0 2 * * *', jobTemplate: { spec: { template: TEMPLATE } } },
      ),
      { kind: 'CronJob', namespace: 'batch', name: 'nightly' },
    ],
    [
      'an Argo Rollout',
      workload('Rollout', 'argoproj.io/v1alpha1', { name: 'web', namespace: 'shop' }),
      { kind: 'Rollout', namespace: 'shop', name: 'web' },
    ],
  ])('%s', (_, document, resource) => {
    const { inputs } = podInputs([document], 'input.yaml', 'fallback');

    expect(inputs).toHaveLength(1);
    expect(inputs[0]!.resource).toEqual(resource);
    expect(inputs[0]!.document).toBe(document);
  });

  it('never throws for a Pod whose metadata has the wrong types: the engine reports the field later', () => {
    const { inputs } = podInputs([{ kind: 'Pod', metadata: { name: 7, namespace: ['x'] } }], 'input.yaml', 'fallback');

    expect(inputs[0]!.resource).toEqual({ kind: 'Pod', namespace: 'fallback', name: '' });
  });

  it('names no resource for a document that creates no Pod', () => {
    const { inputs, skipped } = podInputs(
      [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' } }],
      'input.yaml',
      'default',
    );

    expect(inputs).toEqual([]);
    expect(skipped).toEqual(['input.yaml: document 1 (kind "Service") creates no Pod; skipped']);
  });

  it.each([
    ['a Helm values file', { replicaCount: 2, image: { repository: 'nginx' } }],
    ['an empty object', {}],
    ['a document of metadata only', { metadata: { name: 'bare' } }],
  ])('skips %s, which has no kind and no spec.containers, saying so', (_case, document) => {
    const { inputs, skipped } = podInputs([document], 'values.yaml', 'default');

    expect(inputs).toEqual([]);
    expect(skipped).toEqual(['values.yaml: document 1 has no kind and no spec.containers, so it is no Pod; skipped']);
  });

  it('skips a bare list with a hint about a List', () => {
    const { inputs, skipped } = podInputs([[{ kind: 'Pod' }]], 'pods.json', 'default');

    expect(inputs).toEqual([]);
    expect(skipped).toEqual([
      'pods.json: document 1 is a bare list; put the objects in the items of a List (apiVersion: v1, kind: List, items: [...]); skipped',
    ]);
  });
});
