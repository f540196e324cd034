/** PodPlacement: which placement a Pod gets, chosen by workloadSelector in the order PodMutations apply. */
import { describe, expect, it } from 'vitest';
import { validatePodPlacement, type NormalizedPlacement } from '../../lib/api/index.ts';
import { reviewPod, podFacts } from '../../lib/engine/index.ts';
import { createPlacementStep, parsePlacementPolicy } from '../../lib/placement/index.ts';
import { pod, req, rules, termOf } from '../support/builders.ts';
import { type PlacementSources } from '../../lib/placement/selection.ts';

/** A PodPlacement validated as the sync validates it. */
function placement(name: string, spec: Record<string, unknown>): NormalizedPlacement {
  const verdict = validatePodPlacement({
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodPlacement',
    metadata: { name },
    spec: { enable: true, ...spec },
  });
  if (!verdict.valid) throw new Error(JSON.stringify(verdict.invalid.issues));
  return verdict.placement;
}

const batchPod = (namespace = 'batch') => pod({ namespace });

function place(sources: PlacementSources, namespace = 'batch') {
  const step = createPlacementStep({ flavour: 'karpenter', ...sources });
  return reviewPod(
    { pod: batchPod(namespace), namespace, ruleSet: rules(), context: { requestUid: 'uid-1' } },
    { managedSteps: [step] },
  );
}

const requiredOf = (outcome: ReturnType<typeof place>) =>
  outcome.pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;

describe('a PodPlacement', () => {
  it('places the Pods its workloadSelector selects', () => {
    const outcome = place({
      placements: [placement('batch-spot', { workloadSelector: { namespaces: ['batch'] }, mode: 'Spot' })],
    });
    expect(requiredOf(outcome)).toEqual([termOf(req('karpenter.sh/capacity-type', 'In', 'spot'))]);
    expect(outcome.applied).toEqual(['managed:capacity']);
  });

  it('leaves alone the Pods it does not select', () => {
    const outcome = place(
      { placements: [placement('batch-spot', { workloadSelector: { namespaces: ['batch'] }, mode: 'Spot' })] },
      'web',
    );
    expect(outcome.decision).toBe('unchanged');
  });

  it('places no Pod while it is disabled', () => {
    const outcome = place({
      placements: [
        placement('batch-spot', { enable: false, workloadSelector: { namespaces: ['batch'] }, mode: 'Spot' }),
      ],
    });
    expect(outcome.decision).toBe('unchanged');
  });
});

describe('several PodPlacements that select one Pod', () => {
  const spot = placement('a-spot', { priority: 5, workloadSelector: { namespaces: ['batch'] }, mode: 'Spot' });
  const onDemand = placement('b-on-demand', { priority: 5, workloadSelector: { all: true }, mode: 'NonSpot' });
  const first = placement('z-first', { priority: -1, workloadSelector: { kinds: ['Deployment'] }, mode: 'NonSpot' });

  it('apply only the first in ascending priority, then name, and name the others', () => {
    const step = createPlacementStep({ flavour: 'karpenter', placements: [spot, onDemand, first] });
    const chosen = step.choose(podFacts(batchPod(), 'batch'));
    expect(chosen).toMatchObject({ mode: 'NonSpot', placement: 'z-first', alsoMatched: ['a-spot', 'b-on-demand'] });
  });

  it('break a priority tie by name', () => {
    const step = createPlacementStep({ flavour: 'karpenter', placements: [onDemand, spot] });
    expect(step.choose(podFacts(batchPod(), 'batch'))?.placement).toBe('a-spot');
  });
});

describe('a placement policy of the table', () => {
  it('wins over every PodPlacement that selects its workload, which explain lists as also matched', () => {
    const policy = parsePlacementPolicy({ namespace: 'batch', kind: 'Deployment', name: 'web', mode: 'NonSpot' });
    const sources = {
      policies: [policy],
      placements: [placement('batch-spot', { workloadSelector: { namespaces: ['batch'] }, mode: 'Spot' })],
    };
    const chosen = createPlacementStep({ flavour: 'karpenter', ...sources }).choose(podFacts(batchPod(), 'batch'));
    expect(chosen).toMatchObject({
      mode: 'NonSpot',
      source: 'placement policy batch/Deployment/web',
      alsoMatched: ['batch-spot'],
    });
    expect(requiredOf(place(sources))).toEqual([termOf(req('karpenter.sh/capacity-type', 'In', 'on-demand'))]);
  });
});

describe('the step without any placement', () => {
  it('is empty, so admission runs no managed step', () => {
    const disabled = placement('off', { enable: false, workloadSelector: { all: true }, mode: 'Spot' });
    expect(createPlacementStep({ flavour: 'karpenter', placements: [disabled] }).empty).toBe(true);
    expect(createPlacementStep({ flavour: 'karpenter', placements: [{ ...disabled, enable: true }] }).empty).toBe(
      false,
    );
  });
});
