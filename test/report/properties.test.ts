/** Properties of the report's comparison: Kubernetes reads tolerations, terms, requirements and values as sets, and so does the verdict. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleSet, reviewPod, type Pod, type RuleSet } from '../../lib/engine/index.ts';
import { createReport, type ReportWorkload } from '../../lib/report/index.ts';
import { podFromWorkload, readWorkloadObject } from '../../lib/workloads/index.ts';
import type { NodeSelectorTerm, PreferredSchedulingTerm, Toleration } from '../../lib/scheduling/index.ts';
import { randomPod, randomRules } from '../support/arbitraries.ts';
import { type Verdict } from '../../lib/report/types.ts';

/** A small deterministic generator (mulberry32), so that one seed is one permutation fast-check can shrink and replay. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}

function shuffledTerm(term: NodeSelectorTerm, random: () => number): NodeSelectorTerm {
  const requirements = (list: NodeSelectorTerm['matchExpressions']) =>
    list === undefined
      ? undefined
      : shuffled(list, random).map((item) =>
          item.values === undefined ? item : { ...item, values: shuffled(item.values, random) },
        );
  return {
    ...(term.matchExpressions === undefined ? {} : { matchExpressions: requirements(term.matchExpressions) }),
    ...(term.matchFields === undefined ? {} : { matchFields: requirements(term.matchFields) }),
  };
}

/** The Pod with its tolerations, required terms, their requirements and values, and preferred terms in another order. */
function permuted(pod: Pod, seed: number): Pod {
  const random = generator(seed);
  const spec = pod.spec ?? {};
  const nodeAffinity = spec.affinity?.nodeAffinity;
  const required = nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const preferred = nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
  const affinity =
    nodeAffinity === undefined
      ? spec.affinity
      : {
          ...spec.affinity,
          nodeAffinity: {
            ...(required === undefined
              ? {}
              : {
                  requiredDuringSchedulingIgnoredDuringExecution: {
                    nodeSelectorTerms: shuffled(required.nodeSelectorTerms, random).map((term) =>
                      shuffledTerm(term, random),
                    ),
                  },
                }),
            ...(preferred === undefined
              ? {}
              : {
                  preferredDuringSchedulingIgnoredDuringExecution: shuffled(preferred, random).map(
                    (item: PreferredSchedulingTerm) => ({ ...item, preference: shuffledTerm(item.preference, random) }),
                  ),
                }),
          },
        };
  const tolerations: readonly Toleration[] | undefined =
    spec.tolerations === undefined ? undefined : shuffled(spec.tolerations, random);
  return {
    ...pod,
    spec: {
      ...spec,
      ...(affinity === undefined ? {} : { affinity }),
      ...(tolerations === undefined ? {} : { tolerations }),
    },
  };
}

const OWNERS = (template: Pod) => [
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'production' },
    spec: { template: { metadata: { labels: { app: 'web' } }, spec: template.spec } },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: 'web-5d8f7c9b4',
      namespace: 'production',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', controller: true }],
    },
    spec: { template: { metadata: { labels: { app: 'web', 'pod-template-hash': '5d8f7c9b4' } }, spec: template.spec } },
  },
];

/** The running Pod: the template's Pod admitted by the engine, or the template's Pod as it was before any rule. */
function runningPod(template: Pod, rules: RuleSet, admitted: boolean): Pod {
  const created = podFromWorkload(readWorkloadObject(OWNERS(template)[0], 'web'), {
    namespace: 'production',
    templateHash: '5d8f7c9b4',
  });
  const pod = admitted
    ? reviewPod({ pod: created, namespace: 'production', ruleSet: rules, context: { requestUid: 'property' } }).pod
    : created;
  return { ...pod, metadata: { ...pod.metadata, name: 'web-5d8f7c9b4-abcde' } };
}

function judged(
  template: Pod,
  rules: RuleSet,
  running: Pod,
): { verdict: Verdict | undefined; workloads: readonly ReportWorkload[] } {
  const builder = createReport(rules);
  OWNERS(template).forEach((owner, index) => builder.addOwner(owner, `owners[${index}]`));
  const verdict = builder.addPod(running, 'pod');
  return { verdict, workloads: builder.result().workloads };
}

describe('report properties', () => {
  it('gives the same verdict and change whatever the order of tolerations, terms, requirements and values of the running Pod', () => {
    fc.assert(
      fc.property(randomPod, randomRules, fc.boolean(), fc.integer(), (template, normalized, admitted, seed) => {
        const rules = compileRuleSet(normalized);
        const running = runningPod(template, rules, admitted);

        expect(judged(template, rules, permuted(running, seed))).toEqual(judged(template, rules, running));
      }),
      // PROPERTY_RUNS=50000 for a soak run; 500 keep the suite fast.
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 500) },
    );
  });

  it('finds a Pod the engine admitted under the same rules current, or unaffected, or denied; never pending', () => {
    fc.assert(
      fc.property(randomPod, randomRules, (template, normalized) => {
        const rules = compileRuleSet(normalized);

        expect(judged(template, rules, runningPod(template, rules, true)).verdict).not.toBe('pending');
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 500) },
    );
  });
});
