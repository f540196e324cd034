import fc from 'fast-check';
import jsonPatch from 'fast-json-patch';
import { beforeAll, describe, expect, it } from 'vitest';
import { answerAdmissionReview, summarizeVerdict } from '../../lib/admission/index.ts';
import { compileRuleSet, type Pod, type RuleSet } from '../../lib/engine/index.ts';
import { loadRuleFiles } from '../../lib/rule-files/index.ts';
import type { NodeSelectorTerm } from '../../lib/scheduling/index.ts';
import { pod, rule, rules } from '../support/builders.ts';
import { EXAMPLES, fixtureText } from '../support/fixtures.ts';
import { decodePatch, parseAnswer, parseReview } from '../support/reviews.ts';

let ruleSet: RuleSet;
beforeAll(async () => {
  ruleSet = compileRuleSet((await loadRuleFiles([EXAMPLES])).rules);
});

function answer(fixture: string) {
  const text = fixtureText(`reviews/${fixture}`);
  const { body, verdict } = answerAdmissionReview(text, ruleSet);
  return { request: parseReview(text).request, response: parseAnswer(body), verdict, body };
}

function patched(request: { object: Pod }, patch: string | undefined): Pod {
  return jsonPatch.applyPatch(structuredClone(request.object), decodePatch(patch), true, false).newDocument;
}

/** The part of deployment-legacy-pool.json a test edits: the required node selector terms of its Pod. */
interface EditableLegacyPoolReview {
  readonly request: {
    readonly uid: string;
    readonly object: {
      readonly spec: {
        readonly affinity: {
          readonly nodeAffinity: {
            readonly requiredDuringSchedulingIgnoredDuringExecution: { readonly nodeSelectorTerms: NodeSelectorTerm[] };
          };
        };
      };
    };
  };
}

describe('answerAdmissionReview on real AdmissionReviews', () => {
  it('answers a Deployment Pod on the legacy pool with the reference migration, as a base64 JSONPatch', () => {
    const { request, response } = answer('deployment-legacy-pool.json');
    expect(response).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: request.uid, allowed: true, patchType: 'JSONPatch' },
    });
    const pod = patched(request, response.response.patch);
    expect(pod.metadata?.annotations).toEqual({
      'kubectl.kubernetes.io/restartedAt': '2026-11-30T09:12:44Z',
      'example.com/migration': 'merged-pool',
      'podmutation.agent.cloudpilot.ai/applied': 'migrate-legacy-pool',
    });
    expect(pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual(
      [
        {
          matchExpressions: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'example.com/node-pool', operator: 'In', values: ['merged'] },
          ],
        },
      ],
    );
    expect(pod.spec?.affinity?.podAntiAffinity).toEqual(request.object.spec?.affinity?.podAntiAffinity);
  });

  it('creates metadata.annotations for a CronJob Pod that has none, and swaps its nodeSelector', () => {
    const { request, response } = answer('cronjob-pod.json');
    const pod = patched(request, response.response.patch);
    expect(pod.metadata?.annotations).toEqual({ 'podmutation.agent.cloudpilot.ai/applied': 'batch-to-spot-pool' });
    expect(pod.spec?.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', 'example.com/node-pool': 'batch-spot' });
    expect(pod.spec?.tolerations?.at(-1)).toEqual({
      key: 'example.com/spot',
      operator: 'Exists',
      effect: 'NoSchedule',
    });
  });

  it.each([
    ['a Pod UPDATE', 'pod-update.json', 'operation UPDATE is not CREATE'],
    ['a ConfigMap CREATE', 'configmap-create.json', 'resource ConfigMap is not a Pod'],
    ['a DaemonSet-owned Pod', 'daemonset-pod.json', 'DaemonSet-owned Pods are not mutated'],
  ])('allows %s with no patch', (_, fixture, reason) => {
    const { request, response, verdict } = answer(fixture);
    expect(response).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: request.uid, allowed: true },
    });
    expect(verdict.skipReason).toBe(reason);
  });

  it.each([
    [
      'a wrong apiVersion',
      'malformed-v1beta1.json',
      'AdmissionReview apiVersion must be admission.k8s.io/v1 (got "admission.k8s.io/v1beta1")',
    ],
    ['no request.uid', 'malformed-no-uid.json', 'AdmissionReview request.uid must be a non-empty string'],
  ])('rejects a review with %s as malformed', (_, fixture, message) => {
    expect(() => answerAdmissionReview(fixtureText(`reviews/${fixture}`), ruleSet)).toThrow(message);
  });

  it('rejects text that is not JSON as malformed', () => {
    expect(() => answerAdmissionReview('{"apiVersion":', ruleSet)).toThrow(/AdmissionReview is not valid JSON/);
  });

  it('denies with allowed false, status code 400 and the rule and limit in the message', async () => {
    const wide = (await loadRuleFiles([EXAMPLES])).rules.map((rule) =>
      rule.name === 'migrate-legacy-pool'
        ? {
            ...rule,
            mutationRemove: {},
            mutationAdd: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: Array.from({ length: 64 }, (_, i) => ({
                    matchExpressions: [{ key: 'example.com/z', operator: 'In' as const, values: [`z${i}`] }],
                  })),
                },
              },
            },
          }
        : rule,
    );
    const review = JSON.parse(fixtureText('reviews/deployment-legacy-pool.json')) as EditableLegacyPoolReview;
    review.request.object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.push(
      ...Array.from({ length: 64 }, (_, i) => ({
        matchExpressions: [
          { key: 'example.com/node-pool', operator: 'In', values: ['legacy'] },
          { key: 'example.com/y', operator: 'In', values: [`y${i}`] },
        ],
      })),
    );
    const { response } = parseAnswer(answerAdmissionReview(JSON.stringify(review), compileRuleSet(wide)).body);
    expect(response).toEqual({
      uid: review.request.uid,
      allowed: false,
      status: {
        code: 400,
        message:
          'PodMutation "migrate-legacy-pool": intermediate required terms before canonicalization would be 4160, above the limit of 4096',
      },
    });
  });

  it('summarizes a verdict without the Pod body', () => {
    const { verdict } = answer('deployment-legacy-pool.json');
    const summary = summarizeVerdict(verdict);
    expect(summary).toEqual({
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      namespace: 'production',
      pod: 'checkout-7d9f8b6c5d-',
      workloadKind: 'Deployment',
      workloadName: 'checkout',
      decision: 'mutated',
      rules: ['migrate-legacy-pool'],
      patchOperations: 3,
      warnings: 0,
    });
  });
});

describe('integers in the subtrees a patch replaces', () => {
  const addsSpot = rules(
    rule('tolerate-spot', {
      enable: true,
      workloadSelector: { namespaces: ['production'] },
      mutationAdd: { tolerations: [{ key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' }] },
    }),
  );

  /** A Pod review whose one toleration's seconds are `digits`, written into the JSON text as they are. */
  function reviewWithSeconds(digits: string): string {
    const object = pod({
      namespace: 'production',
      tolerations: [{ key: 'example.com/draining', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 1 }],
    });
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'seconds',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        namespace: 'production',
        operation: 'CREATE',
        object,
      },
    };
    return JSON.stringify(review).replace('"tolerationSeconds":1', `"tolerationSeconds":${digits}`);
  }

  /** The patch's JSON text, as the API server reads it. */
  function patchText(digits: string): string {
    const { response } = parseAnswer(answerAdmissionReview(reviewWithSeconds(digits), addsSpot).body);
    return Buffer.from(response.patch ?? '', 'base64').toString('utf8');
  }

  it.each([
    ["int64's maximum", '9223372036854775807'],
    ["int64's minimum", '-9223372036854775808'],
    ['the first integer a double cannot hold', '9007199254740993'],
    ['a safe integer', '300'],
  ])('keep their digits: %s (%s) comes back in the replaced tolerations list as written', (_case, digits) => {
    expect(patchText(digits)).toContain(
      `"key":"example.com/draining","operator":"Exists","effect":"NoExecute","tolerationSeconds":${digits}}`,
    );
  });

  it('keep the digits of every int64', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (seconds) => {
        expect(patchText(String(seconds))).toContain(`"tolerationSeconds":${seconds}}`);
      }),
      { numRuns: 300 },
    );
  });

  it('still refuse a number that is no integer, naming the field', () => {
    expect(() => answerAdmissionReview(reviewWithSeconds('1.5'), addsSpot)).toThrow(
      'request.object.spec.tolerations[0].tolerationSeconds: expected an integer, got a number',
    );
  });
});
