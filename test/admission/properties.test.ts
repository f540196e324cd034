/**
 * Any JSON value at any scheduling field of a valid Pod, or at a field of the request, is answered with
 * 200 or 400, through the one code path of the CLI and the Lambda and through the HTTP handler. Nothing else leaves.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerAdmissionReview } from '../../lib/admission/index.ts';
import { reviewPod } from '../../lib/engine/index.ts';
import { MalformedInputError } from '../../lib/errors/index.ts';
import { createAdmissionHandler } from '../../lib/endpoint/index.ts';
import { createPlacementStep } from '../../lib/placement/index.ts';
import { rule, rules } from '../support/builders.ts';
import { fixtureText } from '../support/fixtures.ts';
import { parseAnswer } from '../support/reviews.ts';
import { writeEverything } from './support.ts';
import { TOKEN, admissionEvent, recordingLogger, recordingMetrics } from '../endpoint/support.ts';
import { type AdmissionRules } from '../../lib/endpoint/admission-rules.ts';

type Path = readonly (string | number)[];

/** A JSON object or list of the review, indexed by the steps of a Path. */
type Node = Record<string | number, unknown>;

const REVIEW = JSON.parse(fixtureText('reviews/deployment-legacy-pool.json')) as {
  readonly request: Node & { readonly uid: string };
};

// Rules that read every selector dimension and write every field, plus managed placement for the workload.
const RULES: AdmissionRules = {
  ...rules(
    writeEverything(),
    rule('read-everything', {
      workloadSelector: {
        labelSelector: { matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'Exists' }] },
        nodeSelectorMatch: { 'example.com/old': 'x' },
        tolerationsMatch: [{ key: 'example.com/old' }],
        nodeAffinityMatch: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: ['legacy'] }] },
            ],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 10,
              preference: { matchExpressions: [{ key: 'example.com/zone', operator: 'In', values: ['a'] }] },
            },
          ],
        },
      },
      mutationAdd: { annotations: { 'example.com/read': 'yes' } },
    }),
  ),
  managedSteps: [
    createPlacementStep({
      flavour: 'karpenter',
      policies: [{ namespace: 'production', kind: 'Deployment', name: 'checkout', mode: 'Diversity', spotPercent: 50 }],
    }),
  ],
};

const O = ['object'];
const M = [...O, 'metadata'];
const S = [...O, 'spec'];
const NA = [...S, 'affinity', 'nodeAffinity'];
const R = [...NA, 'requiredDuringSchedulingIgnoredDuringExecution'];
const T = [...R, 'nodeSelectorTerms', 0];
const P = [...NA, 'preferredDuringSchedulingIgnoredDuringExecution'];

/** Every place the webhook reads: the request's fields, and each scheduling field of the Pod down to a value. */
const FIELDS: readonly Path[] = [
  ['kind'],
  ['kind', 'kind'],
  ['resource'],
  ['namespace'],
  ['operation'],
  ['subResource'],
  ['name'],
  ['dryRun'],
  O,
  M,
  [...M, 'name'],
  [...M, 'generateName'],
  [...M, 'namespace'],
  [...M, 'labels'],
  [...M, 'labels', 'pod-template-hash'],
  [...M, 'annotations'],
  [...M, 'annotations', 'podmutation.agent.cloudpilot.ai/applied'],
  [...M, 'annotations', 'podmutation.agent.cloudpilot.ai/capacity'],
  [...M, 'ownerReferences'],
  [...M, 'ownerReferences', 0],
  [...M, 'ownerReferences', 0, 'kind'],
  [...M, 'ownerReferences', 0, 'name'],
  [...M, 'ownerReferences', 0, 'controller'],
  S,
  [...S, 'nodeSelector'],
  [...S, 'nodeSelector', 'example.com/old'],
  [...S, 'tolerations'],
  [...S, 'tolerations', 0],
  [...S, 'tolerations', 0, 'key'],
  [...S, 'tolerations', 0, 'operator'],
  [...S, 'tolerations', 0, 'tolerationSeconds'],
  [...S, 'topologySpreadConstraints'],
  [...S, 'topologySpreadConstraints', 0],
  [...S, 'affinity'],
  NA,
  R,
  [...R, 'nodeSelectorTerms'],
  T,
  [...T, 'matchExpressions'],
  [...T, 'matchExpressions', 0],
  [...T, 'matchExpressions', 0, 'key'],
  [...T, 'matchExpressions', 0, 'operator'],
  [...T, 'matchExpressions', 0, 'values'],
  [...T, 'matchExpressions', 0, 'values', 0],
  [...T, 'matchFields'],
  P,
  [...P, 0],
  [...P, 0, 'weight'],
  [...P, 0, 'preference'],
  [...P, 0, 'preference', 'matchExpressions'],
];

/** The fixture review as JSON text with `value` at `path` (below request); parents are created as needed. */
function reviewText(path: Path, value: unknown): string {
  const review = structuredClone(REVIEW);
  let node: Node = review.request;
  for (const [index, step] of path.slice(0, -1).entries()) {
    const next = path[index + 1];
    if (typeof node[step] !== 'object' || node[step] === null) node[step] = typeof next === 'number' ? [] : {};
    node = node[step] as Node;
  }
  node[path.at(-1)!] = value;
  return JSON.stringify(review);
}

const placedValue = fc.tuple(fc.constantFrom(...FIELDS), fc.anything());

describe('any JSON value at any field the webhook reads', () => {
  it('is answered with a review response (200) or a MalformedInputError (400), never anything else', () => {
    fc.assert(
      fc.property(placedValue, ([path, value]) => {
        let body: string;
        try {
          body = answerAdmissionReview(reviewText(path, value), RULES, { managedSteps: RULES.managedSteps }).body;
        } catch (error) {
          expect(error).toBeInstanceOf(MalformedInputError);
          return;
        }
        expect(parseAnswer(body).response.uid).toBe(REVIEW.request.uid);
      }),
      { numRuns: 3000 },
    );
  });

  it('put in place of the whole Pod, gives the engine an outcome or a MalformedInputError, never another error', () => {
    fc.assert(
      fc.property(fc.anything(), fc.string(), (pod, namespace) => {
        try {
          expect(['mutated', 'unchanged', 'denied', 'skipped']).toContain(
            reviewPod(
              { pod, namespace, ruleSet: RULES, context: { requestUid: 'uid' } },
              { managedSteps: RULES.managedSteps },
            ).decision,
          );
        } catch (error) {
          expect(error).toBeInstanceOf(MalformedInputError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('gets 200 or 400 from the HTTP handler', async () => {
    const handler = createAdmissionHandler({
      rules: {
        get: () =>
          Promise.resolve({
            value: RULES,
            version: 1,
            contentHash: 'sha256:0',
            syncedAt: '2026-12-01T10:00:00.000Z',
            ageSeconds: 0,
            stale: false,
          }),
      },
      acceptedTokens: () => Promise.resolve([TOKEN]),
      logger: recordingLogger(),
      metrics: recordingMetrics(),
    });
    await fc.assert(
      fc.asyncProperty(placedValue, async ([path, value]) => {
        const result = await handler(admissionEvent({ body: reviewText(path, value) }));
        expect([200, 400]).toContain(result.statusCode);
      }),
      { numRuns: 500 },
    );
  });
});
