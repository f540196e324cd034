/**
 * A result checked against the engine: applied and audited lists in order, the denial, the
 * scheduling fields as Kubernetes reads them (a field left out must be as the incoming Pod had it), and the patched
 * resource exactly, a workload's with its Pod template as admission leaves the Pod.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleSet, reviewPod, type Pod, type RuleSet } from '../../lib/engine/index.ts';

import { podInputs, type PodInput } from '../../lib/workloads/index.ts';
import { randomPod, randomRules } from '../support/arbitraries.ts';
import { pod, rule, rules } from '../support/builders.ts';
import { type ExpectedResult, TEST_API_VERSION, TEST_KIND, readRuleTest } from '../../lib/rule-tests/format.ts';
import { checkResult, patchedResource } from '../../lib/rule-tests/expectations.ts';

/** A result as a test file states it, read through the file's reader. */
function expectation(result: Record<string, unknown>): ExpectedResult {
  const document = {
    apiVersion: TEST_API_VERSION,
    kind: TEST_KIND,
    metadata: { name: 't' },
    rules: ['r'],
    resources: ['x'],
    results: [{ resource: 'Pod/web', ...result }],
  };
  return readRuleTest(document, 'podmutation-test.yaml').results[0]!;
}

function inputOf(document: unknown): PodInput {
  return podInputs([document], 'resources.yaml', 'default').inputs[0]!;
}

function check(result: Record<string, unknown>, document: unknown, ruleSet: RuleSet, patchedExpected?: unknown) {
  const input = inputOf(document);
  const outcome = reviewPod(
    { pod: input.pod, namespace: input.namespace, ruleSet, context: { requestUid: 'test' } },
    { fallbackNamespace: 'default' },
  );
  const patched =
    patchedExpected === undefined ? undefined : { expected: patchedExpected, actual: patchedResource(input, outcome) };
  return checkResult(expectation(result), input, outcome, { patched });
}

const SPOT_TOLERATION = { key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' };
const TO_SPOT = rule('to-spot', {
  priority: 1,
  mutationAdd: { tolerations: [SPOT_TOLERATION], nodeSelector: { 'example.com/pool': 'spot' } },
});
const MARK = rule('mark', { priority: 2, mutationAdd: { annotations: { 'example.com/migrated': 'yes' } } });
const BOTH = rules(TO_SPOT, MARK);

describe('checkResult', () => {
  it('passes a result that states what the rules did', () => {
    const failures = check(
      {
        applied: ['to-spot', 'mark'],
        scheduling: {
          nodeSelector: { 'example.com/pool': 'spot' },
          tolerations: [SPOT_TOLERATION],
          annotations: { 'example.com/migrated': 'yes' },
        },
      },
      pod({ name: 'web' }),
      BOTH,
    );

    expect(failures).toEqual([]);
  });

  it('fails an applied list in another order, with both lists', () => {
    expect(check({ applied: ['mark', 'to-spot'] }, pod({ name: 'web' }), BOTH)).toEqual([
      {
        aspect: 'applied',
        summary: 'expected [mark, to-spot], got [to-spot, mark]',
        expected: ['mark', 'to-spot'],
        actual: ['to-spot', 'mark'],
      },
    ]);
  });

  it('fails a field the expectation leaves out when the rules changed it', () => {
    const failures = check(
      {
        applied: ['to-spot', 'mark'],
        scheduling: { nodeSelector: { 'example.com/pool': 'spot' }, annotations: { 'example.com/migrated': 'yes' } },
      },
      pod({ name: 'web' }),
      BOTH,
    );

    expect(failures.map((failure) => [failure.aspect, failure.summary])).toEqual([
      [
        'scheduling',
        'differs as Kubernetes reads it (- expected, + actual): tolerations: +example.com/spot:NoSchedule op=Exists',
      ],
    ]);
  });

  it('keeps a left-out field as the incoming Pod had it', () => {
    const tolerations = [{ key: 'example.com/gpu', operator: 'Exists' }];

    expect(
      check(
        { applied: ['mark'], scheduling: { annotations: { 'example.com/migrated': 'yes' } } },
        pod({ name: 'web', tolerations }),
        rules(MARK),
      ),
    ).toEqual([]);
  });

  it('reads an empty annotations map as "none besides the product\'s"', () => {
    const failures = check({ applied: ['mark'], scheduling: { annotations: {} } }, pod({ name: 'web' }), rules(MARK));

    expect(failures.map((failure) => failure.summary)).toEqual([
      'differs as Kubernetes reads it (- expected, + actual): annotations: +example.com/migrated: yes',
    ]);
  });

  it('expects nothing audited and no denial unless the result says so', () => {
    const audited = rules(rule('audited', { mutationAdd: { nodeSelector: { a: 'b' } } }));
    const input = inputOf(pod({ name: 'web' }));
    const outcome = reviewPod(
      { pod: input.pod, namespace: input.namespace, ruleSet: audited, context: { requestUid: 'test' } },
      { enforcement: 'audit' },
    );

    expect(checkResult(expectation({ applied: [] }), input, outcome).map((failure) => failure.summary)).toEqual([
      'expected [], got [audited]',
    ]);
    expect(checkResult(expectation({ applied: [], audited: ['audited'] }), input, outcome)).toEqual([]);
  });

  describe('a denial', () => {
    // 65 distinct required terms, each ANDed with the added term: above the 64 a rule may produce.
    const wide = pod({
      name: 'web',
      required: Array.from({ length: 65 }, (_, index) => ({
        matchExpressions: [{ key: 'zone', operator: 'In', values: [`z${index}`] }],
      })),
    });
    const adds = rules(
      rule('adds', {
        mutationAdd: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['x'] }] }],
            },
          },
        },
      }),
    );

    it.each<[string, boolean | string, boolean]>([
      ['true passes any denial', true, true],
      ['a part of the message passes that denial', 'above the limit of 64', true],
      ['another message fails', 'above the limit of 32', false],
      ['false fails a denied Pod', false, false],
    ])('%s', (_, denied, passes) => {
      const failures = check({ applied: [], denied }, wide, adds);

      expect(failures.length === 0).toBe(passes);
      if (!passes)
        expect(failures[0]).toMatchObject({
          aspect: 'denied',
          actual: 'PodMutation "adds": required node selector terms after combining would be 65, above the limit of 64',
        });
    });

    it('fails a Pod that was admitted when a denial was expected', () => {
      expect(check({ applied: [], denied: true }, pod({ name: 'web' }), rules())).toEqual([
        { aspect: 'denied', summary: 'expected denied, got admitted', expected: true, actual: false },
      ]);
    });
  });

  it("passes the engine's own scheduling written back in any order of lists and values (property)", () => {
    fc.assert(
      fc.property(randomPod, randomRules, (incoming, ruleList) => {
        const ruleSet = compileRuleSet(ruleList);
        const outcome = reviewPod({ pod: incoming, namespace: 'production', ruleSet, context: { requestUid: 'test' } });
        fc.pre(outcome.denial === undefined);
        const scheduling = reversedScheduling(outcome.pod);
        const input = inputOf(incoming);

        expect(checkResult(expectation({ applied: [...outcome.applied], scheduling }), input, outcome)).toEqual([]);
        const extra = {
          ...scheduling,
          tolerations: [
            ...((scheduling.tolerations as unknown[] | undefined) ?? []),
            { key: 'example.com/never', operator: 'Exists' },
          ],
        };
        expect(
          checkResult(expectation({ applied: [...outcome.applied], scheduling: extra }), input, outcome).map(
            (failure) => failure.aspect,
          ),
        ).toEqual(['scheduling']);
      }),
      { numRuns: 150 },
    );
  });
});

/** A Pod's scheduling fields as an expectation, every list and set of values reversed, product annotations left out. */
function reversedScheduling(mutated: Pod): Record<string, unknown> {
  const reverse = <T>(items: readonly T[] | undefined): T[] | undefined =>
    items === undefined ? undefined : [...items].reverse();
  type Term = { matchExpressions?: { values?: string[] }[]; matchFields?: { values?: string[] }[] };
  const term = (item: Term): Term => ({
    ...(item.matchExpressions === undefined
      ? {}
      : {
          matchExpressions: reverse(item.matchExpressions)!.map((requirement) => ({
            ...requirement,
            ...(requirement.values === undefined ? {} : { values: reverse(requirement.values) }),
          })),
        }),
    ...(item.matchFields === undefined ? {} : { matchFields: item.matchFields }),
  });
  const spec = mutated.spec as {
    nodeSelector?: unknown;
    tolerations?: unknown[];
    affinity?: { nodeAffinity?: Record<string, unknown> };
  };
  const nodeAffinity = spec.affinity?.nodeAffinity as
    | {
        requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: Term[] };
        preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; preference: Term }[];
      }
    | undefined;
  const annotations = Object.fromEntries(
    Object.entries(mutated.metadata?.annotations ?? {}).filter(
      ([key]) => !key.startsWith('podmutation.agent.cloudpilot.ai/'),
    ),
  );
  const required = nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const preferred = nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
  return {
    ...(spec.nodeSelector === undefined ? {} : { nodeSelector: spec.nodeSelector }),
    ...(spec.tolerations === undefined ? {} : { tolerations: reverse(spec.tolerations) }),
    affinity:
      nodeAffinity === undefined
        ? {}
        : {
            nodeAffinity: {
              ...(required === undefined
                ? {}
                : {
                    requiredDuringSchedulingIgnoredDuringExecution: {
                      nodeSelectorTerms: reverse(required.nodeSelectorTerms)!.map(term),
                    },
                  }),
              ...(preferred === undefined
                ? {}
                : {
                    preferredDuringSchedulingIgnoredDuringExecution: reverse(preferred)!.map((item) => ({
                      weight: item.weight,
                      preference: term(item.preference),
                    })),
                  }),
            },
          },
    annotations,
  };
}

describe('patchedResource', () => {
  const cronJob = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'nightly', namespace: 'batch' },
    spec: {
      schedule: '0 2 * * *',
      jobTemplate: {
        spec: {
          template: {
            metadata: { labels: { app: 'nightly' } },
            spec: { restartPolicy: 'Never', containers: [{ name: 'job', image: 'job:1' }] },
          },
        },
      },
    },
  };

  it("writes what admission changed on a CronJob's Pod into its job template, and nothing else", () => {
    const input = inputOf(cronJob);
    const outcome = reviewPod({
      pod: input.pod,
      namespace: input.namespace,
      ruleSet: BOTH,
      context: { requestUid: 'test' },
    });

    expect(patchedResource(input, outcome)).toEqual({
      ...cronJob,
      spec: {
        ...cronJob.spec,
        jobTemplate: {
          spec: {
            template: {
              metadata: {
                labels: { app: 'nightly' },
                annotations: {
                  'example.com/migrated': 'yes',
                  'podmutation.agent.cloudpilot.ai/applied': 'to-spot,mark',
                },
              },
              spec: {
                restartPolicy: 'Never',
                containers: [{ name: 'job', image: 'job:1' }],
                nodeSelector: { 'example.com/pool': 'spot' },
                tolerations: [SPOT_TOLERATION],
              },
            },
          },
        },
      },
    });
    expect(cronJob.spec.jobTemplate.spec.template.metadata).toEqual({ labels: { app: 'nightly' } });
  });

  it('is the document as written when no rule applies', () => {
    const input = inputOf(cronJob);

    expect(
      patchedResource(
        input,
        reviewPod({ pod: input.pod, namespace: input.namespace, ruleSet: rules(), context: { requestUid: 'test' } }),
      ),
    ).toEqual(cronJob);
  });

  it('fails an expected resource that differs, naming the first field that does', () => {
    const failures = check({ applied: ['to-spot', 'mark'] }, cronJob, BOTH, cronJob);

    expect(failures.map((failure) => [failure.aspect, failure.summary])).toEqual([
      ['patchedResource', 'differs at spec.jobTemplate.spec.template.metadata.annotations'],
    ]);
  });

  it('is the mutated Pod for a Pod', () => {
    const input = inputOf(pod({ name: 'web' }));
    const outcome = reviewPod({
      pod: input.pod,
      namespace: input.namespace,
      ruleSet: BOTH,
      context: { requestUid: 'test' },
    });

    expect(patchedResource(input, outcome)).toBe(outcome.pod);
  });
});
