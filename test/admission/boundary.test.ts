/**
 * The input contract of the admission path: every field of the incoming Pod and of the review is either
 * tolerated (absent, null or empty read as absent) or rejected with its field path; nothing else escapes.
 */
import jsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { answerAdmissionReview } from '../../lib/admission/index.ts';
import type { Pod } from '../../lib/engine/index.ts';
import { MalformedInputError } from '../../lib/errors/index.ts';
import { MAX_JSON_DEPTH } from '../../lib/json/index.ts';
import { rules } from '../support/builders.ts';
import { fixtureText } from '../support/fixtures.ts';
import { decodePatch, parseAnswer } from '../support/reviews.ts';
import { writeEverything } from './support.ts';

type Path = readonly (string | number)[];

/** A JSON object or list of the review, indexed by the steps of a Path. */
type Node = Record<string | number, unknown>;

const REVIEW = JSON.parse(fixtureText('reviews/deployment-legacy-pool.json')) as { readonly request: Node };

const RULES = rules(writeEverything());

/** A copy of the fixture review with the value at `path` (below request) replaced, or deleted for undefined. */
function reviewWith(path: Path, value: unknown): Record<string, unknown> {
  const review = structuredClone(REVIEW);
  let node = review.request;
  for (const step of path.slice(0, -1)) {
    node[step] ??= typeof step === 'number' ? [] : {};
    node = node[step] as Node;
  }
  const last = path.at(-1)!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return review;
}

function answer(review: unknown) {
  const { body } = answerAdmissionReview(JSON.stringify(review), RULES);
  return parseAnswer(body).response;
}

/** The Pod after the answer's patch, applied strictly, with null members dropped (null reads as absent). */
function admittedPod(review: { request: { object: unknown } }): unknown {
  const response = answer(review);
  const operations = response.patch === undefined ? [] : decodePatch(response.patch);
  const patched = jsonPatch.applyPatch(structuredClone(review.request.object), operations, true, false).newDocument;
  return JSON.parse(JSON.stringify(patched, (_key, value: unknown) => (value === null ? undefined : value)));
}

const POD = ['object'];
const SPEC = [...POD, 'spec'];
const NODE_AFFINITY = [...SPEC, 'affinity', 'nodeAffinity'];
const REQUIRED = [...NODE_AFFINITY, 'requiredDuringSchedulingIgnoredDuringExecution'];
const PREFERRED = [...NODE_AFFINITY, 'preferredDuringSchedulingIgnoredDuringExecution'];
const TERM = [...REQUIRED, 'nodeSelectorTerms', 0];

describe('a field that is null is read as absent, as the API server decodes it', () => {
  it.each<[string, Path]>([
    ['metadata.labels', [...POD, 'metadata', 'labels']],
    ['metadata.annotations', [...POD, 'metadata', 'annotations']],
    ['metadata.ownerReferences', [...POD, 'metadata', 'ownerReferences']],
    ['metadata.generateName', [...POD, 'metadata', 'generateName']],
    ['spec.nodeSelector', [...SPEC, 'nodeSelector']],
    ['spec.tolerations', [...SPEC, 'tolerations']],
    ['spec.topologySpreadConstraints', [...SPEC, 'topologySpreadConstraints']],
    ['spec.affinity', [...SPEC, 'affinity']],
    ['spec.affinity.nodeAffinity', NODE_AFFINITY],
    ['requiredDuringSchedulingIgnoredDuringExecution', REQUIRED],
    ['nodeSelectorTerms', [...REQUIRED, 'nodeSelectorTerms']],
    ["a term's matchExpressions", [...TERM, 'matchExpressions']],
    ["a requirement's values", [...TERM, 'matchExpressions', 0, 'values']],
    ['preferredDuringSchedulingIgnoredDuringExecution', PREFERRED],
  ])('%s: null answers as the field absent', (_, path) => {
    expect(admittedPod(reviewWith(path, null) as never)).toEqual(admittedPod(reviewWith(path, undefined) as never));
  });

  it('a Pod sent with required: {} (nodeSelectorTerms: null) gets the added terms as its whole required selector', () => {
    const pod = admittedPod(reviewWith(REQUIRED, { nodeSelectorTerms: null }) as never) as Pod;
    expect(pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual({
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'example.com/pool', operator: 'In', values: ['merged'] }] }],
    });
  });

  it('an empty nodeSelectorTerms list answers as no required selector', () => {
    expect(admittedPod(reviewWith([...REQUIRED, 'nodeSelectorTerms'], []) as never)).toEqual(
      admittedPod(reviewWith(REQUIRED, undefined) as never),
    );
  });

  it('request.kind: null falls back to request.resource, as for an absent kind', () => {
    expect(answer(reviewWith(['kind'], null))).toEqual(answer(reviewWith(['kind'], undefined)));
    expect(answer(reviewWith(['kind'], null)).patch).toBeDefined();
  });

  it('metadata: null and spec: null answer as a Pod without them', () => {
    expect(answer(reviewWith([...POD, 'spec'], null)).allowed).toBe(true);
    expect(admittedPod(reviewWith([...POD, 'metadata'], null) as never)).toEqual(
      admittedPod(reviewWith([...POD, 'metadata'], undefined) as never),
    );
  });
});

describe('a value of the wrong type is rejected with its field path', () => {
  const rejected = (review: unknown) => () => answerAdmissionReview(JSON.stringify(review), RULES);

  it.each<[string, Path, unknown, string]>([
    [
      'nodeSelectorTerms as an object',
      [...REQUIRED, 'nodeSelectorTerms'],
      {},
      'request.object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: expected a list, got an object',
    ],
    [
      'a null term',
      [...REQUIRED, 'nodeSelectorTerms'],
      [null],
      'request.object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: expected an object, got null',
    ],
    [
      'a null requirement',
      [...TERM, 'matchExpressions'],
      [null],
      'nodeSelectorTerms[0].matchExpressions[0]: expected an object, got null',
    ],
    [
      'matchExpressions as a string',
      [...TERM, 'matchExpressions'],
      'key In x',
      'nodeSelectorTerms[0].matchExpressions: expected a list, got a string',
    ],
    [
      'a requirement value that is a list',
      [...TERM, 'matchExpressions', 0, 'values'],
      [['legacy']],
      'matchExpressions[0].values[0]: expected a string, got a list',
    ],
    [
      'a requirement key that is a number',
      [...TERM, 'matchExpressions', 0, 'key'],
      7,
      'matchExpressions[0].key: expected a string, got a number',
    ],
    [
      'a null preferred entry',
      PREFERRED,
      [null],
      'preferredDuringSchedulingIgnoredDuringExecution[0]: expected an object, got null',
    ],
    [
      'preferred as an object',
      PREFERRED,
      {},
      'preferredDuringSchedulingIgnoredDuringExecution: expected a list, got an object',
    ],
    [
      'a preferred weight that is a string',
      PREFERRED,
      [{ weight: '10', preference: {} }],
      'preferredDuringSchedulingIgnoredDuringExecution[0].weight: expected an integer, got a string',
    ],
    [
      'a null toleration',
      [...SPEC, 'tolerations'],
      [{ key: 'a', operator: 'Exists' }, null],
      'request.object.spec.tolerations[1]: expected an object, got null',
    ],
    [
      'tolerations as an object',
      [...SPEC, 'tolerations'],
      {},
      'request.object.spec.tolerations: expected a list, got an object',
    ],
    [
      'tolerations as a string',
      [...SPEC, 'tolerations'],
      'all',
      'request.object.spec.tolerations: expected a list, got a string',
    ],
    [
      'tolerationSeconds as a string',
      [...SPEC, 'tolerations'],
      [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: '30' }],
      'request.object.spec.tolerations[0].tolerationSeconds: expected an integer, got a string',
    ],
    [
      'ownerReferences as an object',
      [...POD, 'metadata', 'ownerReferences'],
      {},
      'request.object.metadata.ownerReferences: expected a list, got an object',
    ],
    [
      'ownerReferences as a string',
      [...POD, 'metadata', 'ownerReferences'],
      'ReplicaSet',
      'request.object.metadata.ownerReferences: expected a list, got a string',
    ],
    [
      'a null ownerReference',
      [...POD, 'metadata', 'ownerReferences'],
      [null],
      'request.object.metadata.ownerReferences[0]: expected an object, got null',
    ],
    [
      'a ReplicaSet owner whose name is a number',
      [...POD, 'metadata', 'ownerReferences'],
      [{ kind: 'ReplicaSet', name: 42, controller: true }],
      'request.object.metadata.ownerReferences[0].name: expected a string, got a number',
    ],
    [
      'controller as a string',
      [...POD, 'metadata', 'ownerReferences'],
      [{ kind: 'ReplicaSet', name: 'x', controller: 'true' }],
      'request.object.metadata.ownerReferences[0].controller: expected a boolean, got a string',
    ],
    [
      'a label value that is a number',
      [...POD, 'metadata', 'labels'],
      { app: 1 },
      'request.object.metadata.labels.app: expected a string, got a number',
    ],
    [
      'an annotation key quoted in the path',
      [...POD, 'metadata', 'annotations'],
      { 'example.com/x': false },
      'request.object.metadata.annotations["example.com/x"]: expected a string, got a boolean',
    ],
    [
      'a nodeSelector as a list',
      [...SPEC, 'nodeSelector'],
      [],
      'request.object.spec.nodeSelector: expected an object, got a list',
    ],
    [
      'a topology spread constraint that is a number',
      [...SPEC, 'topologySpreadConstraints'],
      [1],
      'request.object.spec.topologySpreadConstraints[0]: expected an object, got a number',
    ],
    ['spec as a string', [...POD, 'spec'], 'spec', 'request.object.spec: expected an object, got a string'],
    ['the object as null', POD, null, 'request.object: expected an object (the Pod), got null'],
    ['request.kind as a string', ['kind'], 'Pod', 'request.kind: expected an object, got a string'],
    [
      'request.kind.kind as a number',
      ['kind'],
      { group: '', version: 'v1', kind: 1 },
      'request.kind.kind: expected a string, got a number',
    ],
    ['request.namespace as a list', ['namespace'], ['production'], 'request.namespace: expected a string, got a list'],
    ['request.operation as a number', ['operation'], 1, 'request.operation: expected a string, got a number'],
  ])('%s', (_, path, value, message) => {
    const attempt = rejected(reviewWith(path, value));
    expect(attempt).toThrow(MalformedInputError);
    expect(attempt).toThrow(message);
  });

  it.each<[string, Path]>([
    ["a required term's values", [...TERM, 'matchExpressions', 0, 'values']],
    ['a toleration', [...SPEC, 'tolerations', 0, 'nested']],
  ])(`100,000 nested lists inside %s are refused as nesting deeper than ${MAX_JSON_DEPTH} levels`, (_, path) => {
    // JSON.stringify itself overflows on such a value, so the text is spliced in where a placeholder stood.
    const body = JSON.stringify(reviewWith(path, 'DEEP')).replace('"DEEP"', '['.repeat(100_000) + ']'.repeat(100_000));
    expect(() => answerAdmissionReview(body, RULES)).toThrow(
      `request.object: nests deeper than ${MAX_JSON_DEPTH} levels`,
    );
  });

  it('repeats at most a bounded prefix of a 2 MB apiVersion', () => {
    const attempt = () =>
      answerAdmissionReview(JSON.stringify({ ...REVIEW, apiVersion: 'v'.repeat(2 * 1024 * 1024) }), RULES);
    expect(attempt).toThrow(
      /^AdmissionReview apiVersion must be admission\.k8s\.io\/v1 \(got "v{256}"… \(2097152 characters\)\)$/,
    );
  });
});
