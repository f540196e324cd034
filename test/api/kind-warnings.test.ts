/**
 * A `kinds` entry that is a near miss of a workload kind (another case, a plural, kubectl's short name, a misspelling)
 * is warned about, naming the kind meant; the kinds admission resolves and other controllers' kinds are not.
 */
import { describe, expect, it } from 'vitest';
import { ruleWarnings, validatePodMutation, type NormalizedRule } from '../../lib/api/index.ts';
import { podMutation } from '../support/builders.ts';

/** The valid rule selecting these kinds. */
function selectingKinds(kinds: readonly string[]): NormalizedRule {
  const verdict = validatePodMutation(
    podMutation('by-kind', {
      enable: true,
      workloadSelector: { kinds },
      mutationAdd: { annotations: { 'example.com/selected': 'yes' } },
    }),
  );
  if (!verdict.valid) throw new Error(`the rule should be valid: ${JSON.stringify(verdict.invalid)}`);
  return verdict.rule;
}

describe('a kind that is a near miss of a workload kind', () => {
  it.each([
    ['deployment', 'is Deployment in another case', 'Deployment'],
    ['STATEFULSET', 'is StatefulSet in another case', 'StatefulSet'],
    ['Deployments', 'is the plural of Deployment', 'Deployment'],
    ['daemonsets', 'is the plural of DaemonSet', 'DaemonSet'],
    ['Pods', 'is the plural of Pod', 'Pod'],
    ['Rollouts', 'is the plural of Rollout', 'Rollout'],
    ['deploy', "is kubectl's short name of Deployment", 'Deployment'],
    ['sts', "is kubectl's short name of StatefulSet", 'StatefulSet'],
    ['Deploymnet', 'looks like a misspelling of Deployment', 'Deployment'],
    ['Deploymnets', 'looks like a misspelling of Deployment', 'Deployment'],
    ['StatefullSet', 'looks like a misspelling of StatefulSet', 'StatefulSet'],
    ['CronJbo', 'looks like a misspelling of CronJob', 'CronJob'],
    ['Jbo', 'looks like a misspelling of Job', 'Job'],
    ['ReplicationControler', 'looks like a misspelling of ReplicationController', 'ReplicationController'],
  ])('warns about %s: it %s', (kind, why, meant) => {
    expect(ruleWarnings(selectingKinds(['StatefulSet', kind]))).toEqual([
      {
        field: 'spec.workloadSelector.kinds[1]',
        reason: `"${kind}" ${why}, so it never matches ${meant}: kinds are compared exactly as Kubernetes writes an owner's kind (singular, case-sensitive); write ${meant}, or keep "${kind}" if it is another controller's kind`,
      },
    ]);
  });

  it('names both kinds when a misspelling is as near to each', () => {
    const [warning] = ruleWarnings(selectingKinds(['Pob']));

    expect(warning?.reason).toMatch(/^"Pob" looks like a misspelling of Pod or Job, so it never matches Pod or Job:/);
  });

  it('warns once per near miss, each at its own index', () => {
    const warnings = ruleWarnings(selectingKinds(['deployment', 'Deployments', 'Deploymnet']));

    expect(warnings.map(({ field }) => field)).toEqual([
      'spec.workloadSelector.kinds[0]',
      'spec.workloadSelector.kinds[1]',
      'spec.workloadSelector.kinds[2]',
    ]);
  });
});

describe('a kind as Kubernetes or another controller writes it', () => {
  it.each([
    // The kinds admission resolves (docs/api.md, Workload resolution), Argo Rollouts' among them.
    'Pod',
    'Deployment',
    'ReplicaSet',
    'StatefulSet',
    'DaemonSet',
    'Job',
    'CronJob',
    'ReplicationController',
    'Rollout',
    // Other controllers' owner kinds, some a few letters from a workload kind.
    'CloneSet',
    'AdvancedStatefulSet',
    'TFJob',
    'MPIJob',
    'RayJob',
    'JobSet',
    'LeaderWorkerSet',
    'DeploymentConfig',
    'SparkApplication',
    'Workflow',
    'VirtualMachineInstance',
    'Notebook',
    'Node',
  ])('is not warned about: %s', (kind) => {
    expect(ruleWarnings(selectingKinds([kind]))).toEqual([]);
  });
});
