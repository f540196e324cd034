/**
 * One result of a test file checked against what the engine did to its resource's Pod: the applied and audited rules
 * in order, the denial, the scheduling fields as Kubernetes reads them (lib/scheduling's `sameScheduling`, the
 * difference on report's change line) and the patched resource exactly.
 */
import { PRODUCT_ANNOTATION_PREFIX } from '../api/index.ts';
import type { Verdict } from '../capacity/index.ts';
import type { MutationOutcome, Pod } from '../engine/index.ts';
import { schedulingChangeLine } from '../report/index.ts';
import { sameScheduling, schedulingFieldsOf } from '../scheduling/index.ts';
import { canonicalJson, isJsonObject, memberPath, type JsonObject } from '../json/index.ts';
import type { PodInput } from '../workloads/index.ts';
import type { ChosenPlacement } from '../placement/index.ts';
import {
  NO_PLACEMENT,
  podPlacementExpectation,
  POLICY_PLACEMENT,
  type ExpectedResult,
  type ExpectedScheduling,
} from './format.ts';

/** What a result checks. */
type Aspect = 'applied' | 'audited' | 'denied' | 'scheduling' | 'patchedResource' | 'fit' | 'placement';

/** One expectation that did not hold: what was expected, what the engine gave, and a one-line summary. */
export interface CaseFailure {
  readonly aspect: Aspect;
  readonly summary: string;
  readonly expected: unknown;
  readonly actual: unknown;
}

// The Pod fields a scheduling expectation covers, in the order they are shown.
const SPEC_FIELDS = ['nodeSelector', 'tolerations', 'affinity', 'topologySpreadConstraints'] as const;

function list(names: readonly string[]): string {
  return `[${names.join(', ')}]`;
}

function sameList(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((item, index) => item === right[index]);
}

/** The annotations a scheduling expectation compares: all but the product's own, which applied and audited check. */
function isCustomerAnnotation(key: string): boolean {
  return !key.startsWith(PRODUCT_ANNOTATION_PREFIX);
}

/** An expectation's annotations, the customer's only; undefined when none is left. */
function customerAnnotations(annotations: unknown): Record<string, string> | undefined {
  if (!isJsonObject(annotations)) return undefined;
  const kept = Object.entries(annotations).filter(([key]) => isCustomerAnnotation(key));
  return kept.length === 0 ? undefined : (Object.fromEntries(kept) as Record<string, string>);
}

/** The scheduling fields of a Pod (lib/scheduling's one view) as an expectation is written: absent fields left out. */
function schedulingView(pod: Pod): ExpectedScheduling {
  const fields = schedulingFieldsOf(pod, isCustomerAnnotation);
  const view: Record<string, unknown> = {};
  if (fields.nodeSelector != null) view.nodeSelector = fields.nodeSelector;
  if (fields.tolerations != null) view.tolerations = fields.tolerations;
  if (fields.nodeAffinity !== undefined) view.affinity = { nodeAffinity: fields.nodeAffinity };
  if (fields.topologySpreadConstraints != null) view.topologySpreadConstraints = fields.topologySpreadConstraints;
  if (Object.keys(fields.annotations ?? {}).length > 0) view.annotations = fields.annotations;
  return view;
}

/** The expectation completed: each field it leaves out is as the incoming Pod had it (the rules must not change it). */
function expectedView(expected: ExpectedScheduling, incoming: Pod): ExpectedScheduling {
  const view: Record<string, unknown> = { ...schedulingView(incoming) };
  for (const [field, value] of Object.entries(expected)) {
    // An empty annotations map says "none", as an absent one would in a Pod.
    if (field === 'annotations') view.annotations = customerAnnotations(value);
    else view[field] = value;
  }
  return Object.fromEntries(Object.entries(view).filter(([, value]) => value !== undefined));
}

function asPod(view: ExpectedScheduling): Pod {
  const { annotations, ...spec } = view;
  return { metadata: annotations === undefined ? {} : { annotations }, spec };
}

/** The difference of two views as Kubernetes reads them, on report's change line; undefined when they schedule alike. */
function schedulingDifference(expected: ExpectedScheduling, actual: ExpectedScheduling): string | undefined {
  const wanted = schedulingFieldsOf(asPod(expected));
  const got = schedulingFieldsOf(asPod(actual));
  // The line marks with "-" what only its first Pod has: the expectation's, as in the diff below it.
  return sameScheduling(wanted, got) ? undefined : schedulingChangeLine(wanted, got);
}

/** The JSON path of the first difference between two values ("" for the root), undefined when they are equal. */
function firstDifference(expected: unknown, actual: unknown, path = ''): string | undefined {
  // A field one side lacks is undefined there, which has no JSON text.
  if (expected === undefined || actual === undefined) return expected === actual ? undefined : path;
  if (canonicalJson(expected) === canonicalJson(actual)) return undefined;
  if (Array.isArray(expected) && Array.isArray(actual) && expected.length === actual.length) {
    for (let index = 0; index < expected.length; index += 1) {
      const found = firstDifference(expected[index], actual[index], `${path}[${index}]`);
      if (found !== undefined) return found;
    }
  }
  if (isJsonObject(expected) && isJsonObject(actual)) {
    for (const key of [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort()) {
      const found = firstDifference(expected[key], actual[key], path === '' ? key : memberPath(path, key));
      if (found !== undefined) return found;
    }
  }
  return path;
}

/** The failure of a result's fit and fitMessage against where the Pod as admitted can run, if any. */
function fitFailure(expected: ExpectedResult, verdict: Verdict | undefined): CaseFailure | undefined {
  if (verdict === undefined) return undefined;
  const text = verdict.text();
  const kindHolds = expected.fit === undefined || expected.fit === verdict.kind;
  const messageHolds = expected.fitMessage === undefined || text.includes(expected.fitMessage);
  if (kindHolds && messageHolds) return undefined;
  const wanted = [
    ...(expected.fit === undefined ? [] : [expected.fit]),
    ...(expected.fitMessage === undefined ? [] : [`a verdict containing ${JSON.stringify(expected.fitMessage)}`]),
  ].join(', with ');
  return {
    aspect: 'fit',
    summary: `expected ${wanted}, got ${verdict.kind}: ${text}`,
    expected: {
      ...(expected.fit === undefined ? {} : { kind: expected.fit }),
      ...(expected.fitMessage === undefined ? {} : { message: expected.fitMessage }),
    },
    actual: { kind: verdict.kind, text },
  };
}

/** The failure of a result's placement against the placement chosen for the Pod, if any. */
function placementFailure(expected: ExpectedResult, chosen: ChosenPlacement | undefined): CaseFailure | undefined {
  if (expected.placement === undefined) return undefined;
  const actual =
    chosen === undefined
      ? NO_PLACEMENT
      : chosen.placement === undefined
        ? POLICY_PLACEMENT
        : podPlacementExpectation(chosen.placement);
  if (actual === expected.placement) return undefined;
  return {
    aspect: 'placement',
    summary: `expected ${expected.placement}, got ${actual}${chosen === undefined ? '' : ` (${chosen.source})`}`,
    expected: expected.placement,
    actual,
  };
}

/** What a result is checked against besides the outcome, each only when the result asks for it. */
interface Observed {
  /** The document of the result's patchedResource (`expected`) and the resource as admission leaves it (`actual`). */
  readonly patched?: { readonly expected: unknown; readonly actual: unknown } | undefined;
  /** Where the Pod as admitted can run. */
  readonly fit?: Verdict;
  /** The managed placement chosen for the Pod. */
  readonly placement?: ChosenPlacement;
}

/**
 * The failures of one result against the engine's outcome for its Pod (none when it passes), and against what else
 * was observed of it. Scheduling, the patched resource and the fit are not compared for a Pod that was denied: the
 * denial is the failure. The placement is, since it may be what denied the Pod.
 */
export function checkResult(
  expected: ExpectedResult,
  input: PodInput,
  outcome: MutationOutcome,
  actual: Observed = {},
): CaseFailure[] {
  const { fit, patched } = actual;
  const failures: CaseFailure[] = [];
  if (!sameList(expected.applied, outcome.applied)) {
    failures.push({
      aspect: 'applied',
      summary: `expected ${list(expected.applied)}, got ${list(outcome.applied)}`,
      expected: expected.applied,
      actual: outcome.applied,
    });
  }
  const audited = outcome.audited.map((match) => match.name);
  if (!sameList(expected.audited, audited)) {
    failures.push({
      aspect: 'audited',
      summary: `expected ${list(expected.audited)}, got ${list(audited)}`,
      expected: expected.audited,
      actual: audited,
    });
  }
  const denial = outcome.denial?.message ?? false;
  const deniedAsExpected =
    typeof expected.denied === 'string'
      ? denial !== false && denial.includes(expected.denied)
      : expected.denied === (denial !== false);
  if (!deniedAsExpected) {
    const wanted =
      expected.denied === false
        ? 'admitted'
        : expected.denied === true
          ? 'denied'
          : `denied with a message containing ${JSON.stringify(expected.denied)}`;
    failures.push({
      aspect: 'denied',
      summary: `expected ${wanted}, got ${denial === false ? 'admitted' : `denied: ${denial}`}`,
      expected: expected.denied,
      actual: denial,
    });
  }
  const placementFailed = placementFailure(expected, actual.placement);
  if (placementFailed !== undefined) failures.push(placementFailed);
  if (denial !== false) return failures;
  if (expected.scheduling !== undefined) {
    const wanted = expectedView(expected.scheduling, input.pod);
    const actual = schedulingView(outcome.pod);
    const difference = schedulingDifference(wanted, actual);
    if (difference !== undefined)
      failures.push({
        aspect: 'scheduling',
        summary: `differs as Kubernetes reads it (- expected, + actual): ${difference}`,
        expected: wanted,
        actual,
      });
  }
  if (patched !== undefined) {
    const at = firstDifference(patched.expected, patched.actual);
    if (at !== undefined)
      failures.push({
        aspect: 'patchedResource',
        summary: `differs at ${at === '' ? 'the root' : at}`,
        expected: patched.expected,
        actual: patched.actual,
      });
  }
  const fitFailed = fitFailure(expected, fit);
  if (fitFailed !== undefined) failures.push(fitFailed);
  return failures;
}

/** The Pod fields admission changes that a patch operation touches: "annotations", "nodeSelector", "affinity"… */
function touchedFields(outcome: MutationOutcome): Set<string> {
  return new Set(
    outcome.patch.flatMap(({ path }) => {
      const [, root, field] = path.split('/');
      // A patch creates a missing parent whole: /metadata holds the annotations, /spec every scheduling field.
      if (field !== undefined) return [field];
      return root === 'spec' ? SPEC_FIELDS : ['annotations'];
    }),
  );
}

/**
 * The resource as admission leaves it: a Pod (or an AdmissionReview's Pod) mutated; a workload with its Pod template
 * carrying what admission changed on the Pod its controller creates (annotations and the scheduling fields), every
 * other field as written.
 */
export function patchedResource(input: PodInput, outcome: MutationOutcome): unknown {
  if (input.resource.kind === 'Pod' || input.resource.kind === 'AdmissionReview') return outcome.pod;
  const document = structuredClone(input.document);
  const spec = document.spec as JsonObject;
  const owner = input.resource.kind === 'CronJob' ? ((spec.jobTemplate as JsonObject).spec as JsonObject) : spec;
  const template = owner.template as JsonObject;
  const touched = touchedFields(outcome);
  if (touched.has('annotations'))
    template.metadata = {
      ...(isJsonObject(template.metadata) ? template.metadata : {}),
      annotations: outcome.pod.metadata?.annotations,
    };
  const podSpec: JsonObject = isJsonObject(outcome.pod.spec) ? outcome.pod.spec : {};
  for (const field of SPEC_FIELDS) {
    if (!touched.has(field)) continue;
    template.spec = { ...(isJsonObject(template.spec) ? template.spec : {}) };
    if (podSpec[field] === undefined) delete (template.spec as JsonObject)[field];
    else (template.spec as JsonObject)[field] = podSpec[field];
  }
  return document;
}
