import { describe, expect, it } from 'vitest';
import { describeIssues, validatePodMutation } from '../../lib/api/index.ts';
import { podMutation, req, required, termOf } from '../support/builders.ts';

const annotate = { mutationAdd: { annotations: { 'example.com/a': 'b' } } };
const affinity = (operator: string, values?: unknown) => ({
  mutationAdd: {
    nodeAffinity: required(
      termOf({ key: 'example.com/pool', operator, ...(values === undefined ? {} : { values }) } as never),
    ),
  },
});

function issuesOf(spec: Record<string, unknown>, name = 'under-test') {
  const verdict = validatePodMutation(podMutation(name, spec));
  return verdict.valid ? [] : verdict.invalid.issues;
}

describe('validatePodMutation accepts', () => {
  it.each([
    [
      'the reference example',
      {
        priority: 100,
        workloadSelector: {
          namespaces: ['production'],
          kinds: ['Deployment', 'StatefulSet'],
          nodeAffinityMatch: required(termOf(req('example.com/node-pool', 'In', 'legacy'))),
        },
        mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
        mutationAdd: {
          annotations: { 'example.com/migration': 'merged-pool' },
          nodeAffinity: required(termOf(req('example.com/node-pool', 'In', 'merged'))),
        },
      },
    ],
    [
      'Gt with a signed integer in a preferred term ("Gt and Lt need exactly one value that parses as an integer, sign allowed")',
      {
        mutationAdd: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, preference: termOf(req('example.com/gen', 'Gt', '-3')) },
            ],
          },
        },
      },
    ],
    ['Lt with an unsigned integer in a required term', affinity('Lt', ['10'])],
    ['Exists with no values', affinity('Exists')],
    ['a label value that is empty ("value: at most 63 ... may be empty")', affinity('In', [''])],
    [
      'all: false beside keys ("all: false counts as absent")',
      { mutationRemove: { nodeAffinity: { keys: ['example.com/pool'], all: false } } },
    ],
    [
      'a toleration with an empty key and Exists ("an empty key requires Exists")',
      { mutationAdd: { tolerations: [{ operator: 'Exists' }] } },
    ],
    [
      'a toleration without operator ("absent means Equal, as in Kubernetes")',
      { mutationAdd: { tolerations: [{ key: 'example.com/gpu', value: 'true', effect: 'NoSchedule' }] } },
    ],
    [
      'reserved keys in a labelSelector, which selects on Pod labels',
      { workloadSelector: { labelSelector: { matchLabels: { 'karpenter.sh/capacity-type': 'spot' } } }, ...annotate },
    ],
    [
      'a reserved key in nodeSelectorMatch (the API reference reserves them in node affinity only)',
      { workloadSelector: { nodeSelectorMatch: { 'node.kubernetes.io/instance-type': 'm5.large' } }, ...annotate },
    ],
    [
      "a reserved key in mutationRemove.nodeSelector.keys: the Pod's own instance-type pin, dropped before Karpenter",
      {
        workloadSelector: { nodeSelectorMatch: { 'node.kubernetes.io/instance-type': 'm5.large' } },
        mutationRemove: { nodeSelector: { keys: ['node.kubernetes.io/instance-type', 'karpenter.sh/capacity-type'] } },
      },
    ],
  ])('%s', (_, spec) => {
    expect(issuesOf(spec as Record<string, unknown>)).toEqual([]);
  });

  it('applies the defaults enable false and priority 0', () => {
    const verdict = validatePodMutation({
      ...podMutation('defaults', annotate),
      spec: { workloadSelector: { all: true }, ...annotate },
    });
    expect(verdict.valid && { enable: verdict.rule.enable, priority: verdict.rule.priority }).toEqual({
      enable: false,
      priority: 0,
    });
  });
});

describe('validatePodMutation rejects, naming the field path', () => {
  it.each([
    [
      'a rule that removes and adds nothing ("both absent or empty is invalid")',
      { mutationAdd: { annotations: {} } },
      'spec',
    ],
    [
      'matchFields in nodeAffinityMatch ("matchFields is rejected wherever a rule gives node affinity")',
      {
        workloadSelector: {
          nodeAffinityMatch: required({
            matchFields: [req('metadata.name', 'In', 'n1')],
            matchExpressions: [req('a', 'Exists')],
          }),
        },
        ...annotate,
      },
      'spec.workloadSelector.nodeAffinityMatch.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields',
    ],
    [
      'matchFields in mutationAdd.nodeAffinity',
      { mutationAdd: { nodeAffinity: required({ matchFields: [req('metadata.name', 'In', 'n1')] }) } },
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields',
    ],
    [
      'an empty term ("and so is an empty term")',
      { mutationAdd: { nodeAffinity: required({}) } },
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions',
    ],
    [
      'an empty nodeSelectorTerms list',
      { mutationAdd: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } } },
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms',
    ],
    [
      'an annotation under the product prefix ("Rules may not set annotations under the product\'s own prefix")',
      { mutationAdd: { annotations: { 'podmutation.agent.cloudpilot.ai/applied': 'x' } } },
      'spec.mutationAdd.annotations.podmutation.agent.cloudpilot.ai/applied',
    ],
    [
      'both keys and all: true',
      { mutationRemove: { nodeAffinity: { keys: ['a'], all: true } } },
      'spec.mutationRemove.nodeAffinity',
    ],
    [
      'neither keys nor all: true',
      { mutationRemove: { nodeAffinity: { all: false } }, ...annotate },
      'spec.mutationRemove.nodeAffinity',
    ],
    [
      'an empty keys list ("keys (non-empty list of label keys)")',
      { mutationRemove: { nodeAffinity: { keys: [] } }, ...annotate },
      'spec.mutationRemove.nodeAffinity.keys',
    ],
    [
      'In without values ("In and NotIn need at least one value")',
      affinity('In', []),
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values',
    ],
    [
      'Exists with values ("Exists and DoesNotExist need none")',
      affinity('Exists', ['x']),
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values',
    ],
    [
      'Gt with two values',
      affinity('Gt', ['1', '2']),
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values',
    ],
    [
      'Lt with a value that is not an integer ("the API server does not check this; we do")',
      affinity('Lt', ['1.5']),
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]',
    ],
    [
      'Gt with a signed integer in a required term, which the API server rejects as a label value',
      affinity('Gt', ['-3']),
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]',
    ],
    [
      'an unknown operator',
      affinity('Like', ['x']),
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator',
    ],
    [
      'a weight of 0 ("preferred weights 1..100")',
      {
        mutationAdd: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: termOf(req('a', 'Exists')) }],
          },
        },
      },
      'spec.mutationAdd.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight',
    ],
    [
      'a weight of 101',
      {
        mutationAdd: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 101, preference: termOf(req('a', 'Exists')) }],
          },
        },
      },
      'spec.mutationAdd.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight',
    ],
    [
      'a label key whose name part is over 63 characters',
      { mutationAdd: { nodeAffinity: required(termOf(req(`example.com/${'a'.repeat(64)}`, 'Exists'))) } },
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key',
    ],
    [
      'a label key prefix that is not a DNS-1123 subdomain',
      { mutationAdd: { nodeAffinity: required(termOf(req('Example.COM/pool', 'Exists'))) } },
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key',
    ],
    [
      'a label value with a space',
      affinity('In', ['two words']),
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]',
    ],
    [
      'a label value over 63 characters',
      affinity('In', ['v'.repeat(64)]),
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]',
    ],
    [
      'a reserved key in nodeAffinityMatch',
      {
        workloadSelector: { nodeAffinityMatch: required(termOf(req('karpenter.sh/capacity-type', 'In', 'spot'))) },
        ...annotate,
      },
      'spec.workloadSelector.nodeAffinityMatch.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key',
    ],
    [
      'a reserved key in mutationAdd.nodeAffinity',
      { mutationAdd: { nodeAffinity: required(termOf(req('eks.amazonaws.com/capacityType', 'In', 'SPOT'))) } },
      'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key',
    ],
    [
      'a reserved key in mutationRemove.nodeAffinity.keys',
      { mutationRemove: { nodeAffinity: { keys: ['cloud.google.com/gke-provisioning'] } } },
      'spec.mutationRemove.nodeAffinity.keys[0]',
    ],
    [
      'a reserved key in mutationAdd.nodeSelector',
      { mutationAdd: { nodeSelector: { 'karpenter.sh/capacity-type': 'spot' } } },
      'spec.mutationAdd.nodeSelector.karpenter.sh/capacity-type',
    ],
    [
      'a toleration operator other than Equal or Exists',
      { mutationAdd: { tolerations: [{ key: 'a', operator: 'In' }] } },
      'spec.mutationAdd.tolerations[0].operator',
    ],
    [
      'a toleration with Exists and a value ("Exists takes no value")',
      { mutationAdd: { tolerations: [{ key: 'a', operator: 'Exists', value: 'x' }] } },
      'spec.mutationAdd.tolerations[0].value',
    ],
    [
      'a toleration with an empty key and Equal',
      { mutationAdd: { tolerations: [{ value: 'x' }] } },
      'spec.mutationAdd.tolerations[0].operator',
    ],
    [
      'a toleration effect outside the list',
      { workloadSelector: { tolerationsMatch: [{ key: 'a', effect: 'NoRun' }] }, ...annotate },
      'spec.workloadSelector.tolerationsMatch[0].effect',
    ],
    [
      'matchFields in a nodeAffinityMatch preference',
      {
        workloadSelector: {
          nodeAffinityMatch: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, preference: { matchFields: [req('metadata.name', 'In', 'n')] } },
            ],
          },
        },
        ...annotate,
      },
      'spec.workloadSelector.nodeAffinityMatch.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields',
    ],
    [
      'a misspelt selector field that would otherwise widen the match',
      { workloadSelector: { namespace: ['production'] }, ...annotate },
      'spec.workloadSelector.namespace',
    ],
    [
      'a priority that is not an integer ("priority (integer, default 0, lower first)")',
      { priority: 1.5, ...annotate },
      'spec.priority',
    ],
    ['an enable that is not a boolean', { enable: 'yes', ...annotate }, 'spec.enable'],
  ])('%s', (_, spec, field) => {
    expect(issuesOf(spec as Record<string, unknown>).map((issue) => issue.field)).toContain(field);
  });

  it.each([
    [
      '65 required terms ("at most 64 required terms")',
      {
        mutationAdd: {
          nodeAffinity: required(...Array.from({ length: 65 }, (_, i) => termOf(req('a', 'In', `v${i}`)))),
        },
      },
      'has 65 terms, above the limit of 64',
    ],
    [
      '65 preferred terms',
      {
        mutationAdd: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: Array.from({ length: 65 }, (_, i) => ({
              weight: 1,
              preference: termOf(req('a', 'In', `v${i}`)),
            })),
          },
        },
      },
      'has 65 terms, above the limit of 64',
    ],
    [
      '65 expressions in one term',
      {
        mutationAdd: {
          nodeAffinity: required(termOf(...Array.from({ length: 65 }, (_, i) => req(`k${i}`, 'Exists')))),
        },
      },
      'has 65 requirements, above the limit of 64',
    ],
    [
      '65 values in one expression',
      affinity(
        'In',
        Array.from({ length: 65 }, (_, i) => `v${i}`),
      ),
      'has 65 values, above the limit of 64',
    ],
    [
      '65 tolerations',
      {
        mutationAdd: {
          tolerations: Array.from({ length: 65 }, (_, i) => ({ key: `example.com/t${i}`, operator: 'Exists' })),
        },
      },
      'has 65 tolerations, above the limit of 64',
    ],
    [
      '65 removed node affinity keys',
      { mutationRemove: { nodeAffinity: { keys: Array.from({ length: 65 }, (_, i) => `example.com/k${i}`) } } },
      'has 65 keys, above the limit of 64',
    ],
    [
      '65 values in a nodeAffinityMatch expression ("in nodeAffinityMatch as well as in mutationAdd.nodeAffinity")',
      {
        workloadSelector: {
          nodeAffinityMatch: required(termOf(req('a', 'In', ...Array.from({ length: 65 }, (_, i) => `v${i}`)))),
        },
        ...annotate,
      },
      'has 65 values, above the limit of 64',
    ],
  ])('a configuration with %s, stating the limit', (_, spec, reason) => {
    expect(issuesOf(spec as Record<string, unknown>).map((issue) => issue.reason)).toContain(reason);
  });

  it('reports an invalid resource by its name and every issue by field path', () => {
    const verdict = validatePodMutation(
      podMutation('broken', {
        priority: 'high',
        mutationAdd: { nodeSelector: { 'karpenter.sh/capacity-type': 'spot' } },
      }),
    );
    expect(verdict.valid).toBe(false);
    if (verdict.valid) return;
    expect(describeIssues(verdict.invalid)).toEqual([
      'PodMutation "broken": spec.priority: must be a 32-bit integer (got "high")',
      'PodMutation "broken": spec.mutationAdd.nodeSelector.karpenter.sh/capacity-type: a key reserved for the product\'s managed capacity placement (karpenter.sh/capacity-type, eks.amazonaws.com/capacityType, cloud.google.com/gke-provisioning, node.kubernetes.io/instance-type) cannot be used in rules; to send Pods to Spot or on-demand capacity, declare a PodPlacement (docs/placement.md) (got "karpenter.sh/capacity-type")',
    ]);
  });

  it.each([
    ['a wrong apiVersion', { ...podMutation('x', annotate), apiVersion: 'v1' }, 'apiVersion'],
    ['a wrong kind', { ...podMutation('x', annotate), kind: 'Pod' }, 'kind'],
    ['a missing name', { ...podMutation('x', annotate), metadata: {} }, 'metadata.name'],
    [
      'a name that is not a DNS-1123 subdomain',
      { ...podMutation('x', annotate), metadata: { name: 'Not_Valid' } },
      'metadata.name',
    ],
    [
      'a missing spec',
      { apiVersion: 'agent.cloudpilot.ai/v1alpha1', kind: 'PodMutation', metadata: { name: 'x' } },
      'spec',
    ],
  ])('a resource with %s', (_, resource, field) => {
    const verdict = validatePodMutation(resource);
    expect(verdict.valid ? [] : verdict.invalid.issues.map((issue) => issue.field)).toContain(field);
  });
});
