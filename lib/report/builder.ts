/**
 * The report as a streaming fold: owners are added first and kept (their templates only where a Pod is built from
 * them, and of a StatefulSet's ControllerRevisions only its current one's); Pods are then folded one at a time into
 * per-workload and per-rule counters and dropped, so memory grows with the number of workloads, never with the number
 * of Pods (but for the names and uids of the pending Pods of StatefulSets that only deleting their Pods rolls out).
 */
import { APPLIED_ANNOTATION, type Enforcement } from '../api/index.ts';
import { Capacity, type VerdictKind } from '../capacity/index.ts';
import {
  arrivalFromStamp,
  asRecreated,
  reviewPod,
  podFacts,
  type CompiledRule,
  type ManagedStep,
  type MutationOutcome,
  type Pod,
  type PodFacts,
  type RuleSet,
  type StampDigest,
  type Workload,
} from '../engine/index.ts';
import { CAPACITY_ANNOTATION, withRecordedCapacity } from '../placement/index.ts';
import { compareCodeUnits } from '../text/index.ts';
import {
  classifyObject,
  createOwnerIndex,
  podFromWorkload,
  podOrdinal,
  readControllerRevision,
  readPodIdentity,
  readWorkloadObject,
  type Deletion,
  type OwnerIndex,
  type PodIdentity,
  type PodOrigin,
} from '../workloads/index.ts';
import { admissionInputs, asAdmitted, type AdmissionInputs, type Refusal } from './admitted.ts';
import { boundedLine, schedulingChange } from './compare.ts';
import { RememberedCapacity } from './remembered-capacity.ts';
import { isRuntimeClass, readRuntimeClass, type RuntimeClassScheduling } from './runtime-class.ts';
import type { MigrationReport, ReportPod, ReportRule, ReportWorkload, Verdict } from './types.ts';

/**
 * What the report runs besides the rules, and which Pods it reads.
 * @internal Exported for tests: the tests type the options they build reports with.
 */
interface ReportOptions {
  /** Managed steps run after the rules, as admission runs them (capacity placement). */
  readonly managedSteps?: readonly ManagedStep[];
  /** The deployment's switch: `audit` audits every rule (default `enforce`: each rule's own enforcement). */
  readonly enforcement?: Enforcement;
  /** Only objects and Pods of this namespace are read; others are ignored. */
  readonly namespace?: string;
  /**
   * The stamps' digests, as admission reads stamps: a running Pod recreated from its own spec (no owner in the input,
   * or a custom one) is then evaluated as its author sent it, which is what admission does to its recreation.
   */
  readonly stamps?: StampDigest;
  /**
   * The cluster's Nodes and NodePools: each Pod the rules change is judged against them (ReportWorkload.fit,
   * ReportRule.unschedulable). Default Capacity.unknown(): only a Pod's own contradictions are found.
   */
  readonly capacity?: Capacity;
}

/** The report being built: owners first, then Pods, then the result. */
interface ReportBuilder {
  /**
   * Adds a possible owner (any non-Pod object, a StatefulSet's ControllerRevision too), or a RuntimeClass (node.k8s.io),
   * whose scheduling the API server merges into the Pods that name it; returns false when it is ignored (another kind,
   * another namespace).
   */
  addOwner(object: unknown, path?: string): boolean;
  /** Folds one running Pod into the report and returns its verdict; undefined for another namespace's and a finished one (Succeeded, Failed). */
  addPod(pod: unknown, path?: string): Verdict | undefined;
  /** The report of everything added so far. */
  result(): MigrationReport;
}

// Change lines kept per workload: enough to see that Pods differ, bounded whatever the number of Pods.
const MAX_SAMPLES = 3;

interface WorkloadTally {
  readonly workload: Workload;
  pods: number;
  current: number;
  pending: number;
  denied: number;
  affected: boolean;
  readonly rules: Set<string>;
  readonly steps: Set<string>;
  readonly samples: string[];
  unsampled: number;
  /** The pending Pods to delete by hand, for a StatefulSet no rollout restart recreates (rollsOutByDeletion). */
  deletePods?: ReportPod[];
  /** Why none of them may be deleted: the first hold found. */
  held?: string;
  /** The worst fit of its changed Pods so far, and the reason of the first Pod that had it. */
  fit?: { kind: VerdictKind; reason: string };
}

interface RuleTally {
  readonly rule: CompiledRule;
  readonly enforcement: Enforcement;
  matched: number;
  current: number;
  pending: number;
  unschedulable: number;
}

// A workload's fit is its worst Pod's: one Pod that fits nowhere is a Pod a rollout leaves Pending.
const FIT_RANK: Readonly<Record<VerdictKind, number>> = { fits: 0, unknown: 1, nowhere: 2 };

function templatePath(origin: PodOrigin & { readonly origin: 'template' }): string {
  return origin.workload.template?.path ?? origin.options.referencedTemplate?.template?.path ?? origin.workload.path;
}

/** A StatefulSet's Pods highest ordinal first, the order of its own rolling update; a name of another form last. */
function byOrdinalDescending(statefulSetName: string, pods: readonly ReportPod[]): ReportPod[] {
  const ordinal = (pod: ReportPod) => podOrdinal(statefulSetName, pod.name) ?? -1;
  return [...pods].sort((left, right) => ordinal(right) - ordinal(left) || compareCodeUnits(left.name, right.name));
}

function changeOf(tally: WorkloadTally): string {
  const more = tally.unsampled === 0 ? [] : [`+${tally.unsampled} more Pods with other changes`];
  return [...tally.samples, ...more].join(' | ');
}

/** What a report builder keeps between calls: the rules and their order, the owners, the running counts. */
interface ReportState {
  readonly ruleSet: RuleSet;
  readonly options: ReportOptions;
  readonly capacity: RememberedCapacity;
  readonly auditAll: boolean;
  readonly owners: OwnerIndex;
  /** The RuntimeClasses added, by name (cluster-scoped: every namespace's Pods may name them). */
  readonly runtimeClasses: Map<string, RuntimeClassScheduling>;
  readonly byName: ReadonlyMap<string, CompiledRule>;
  readonly order: ReadonlyMap<string, number>;
  readonly rules: ReadonlyMap<string, RuleTally>;
  readonly workloads: Map<string, WorkloadTally>;
  readonly totals: { pods: number; unaffected: number; current: number; pending: number; denied: number };
}

function tallyOf(state: ReportState, workload: Workload): WorkloadTally {
  const key = `${workload.namespace}\u0000${workload.kind}\u0000${workload.name}`;
  let tally = state.workloads.get(key);
  if (tally === undefined) {
    tally = {
      workload,
      pods: 0,
      current: 0,
      pending: 0,
      denied: 0,
      affected: false,
      rules: new Set(),
      steps: new Set(),
      samples: [],
      unsampled: 0,
    };
    state.workloads.set(key, tally);
  }
  return tally;
}

function sample(tally: WorkloadTally, line: string): void {
  if (tally.samples.includes(line)) return;
  if (tally.samples.length < MAX_SAMPLES) tally.samples.push(line);
  else tally.unsampled += 1;
}

/** The denial line of a Pod the API server would refuse before storing it. */
function refusalLine(refusal: Refusal): string {
  return boundedLine(
    `denied: the API server's ${refusal.plugin} admission plugin would refuse the Pod: ${refusal.message}`,
  );
}

/** What an outcome is compared with: the running Pod, the enforced rules it matched, and its admission plugins' part. */
interface Compared {
  readonly running: PodFacts;
  readonly enforced: readonly CompiledRule[];
  readonly source: string;
  readonly admission: { readonly inputs: AdmissionInputs; readonly refusal: Refusal | undefined };
}

/**
 * The verdict of a Pod some rule or step concerns: denied (by a rule's limit, or by an admission plugin before or after
 * the webhook), or the Pod the API server would store, its plugins run again on the webhook's result, compared with
 * the running Pod.
 */
function verdictOf(
  outcome: MutationOutcome,
  { running, enforced, source, admission }: Compared,
): { verdict: Exclude<Verdict, 'unaffected'>; line: string } {
  if (outcome.decision === 'denied')
    return {
      verdict: 'denied',
      line: boundedLine(`denied: ${outcome.denial?.message ?? 'admission would be denied'}`),
    };
  // The API server runs its mutating plugins again once a webhook changed the Pod (k8s.io/apiserver
  // pkg/admission/reinvocation.go); on a Pod they already changed, they change nothing more.
  const stored = asAdmitted(outcome.pod, admission.inputs, source);
  const refusal = admission.refusal ?? stored.refusal;
  if (refusal !== undefined) return { verdict: 'denied', line: refusalLine(refusal) };
  // The engine's facts are of the Pod it read, which is not the one it sends when a stamp rebuilt it.
  const rollout =
    stored.pod === running.pod
      ? running
      : stored.pod === outcome.facts.pod
        ? outcome.facts
        : podFacts(stored.pod, outcome.workload.namespace, source);
  const keys = [...new Set(enforced.flatMap((rule) => rule.add.annotations.map(([key]) => key)))];
  const line = schedulingChange(rollout, running, keys);
  return line === undefined ? { verdict: 'current', line: '' } : { verdict: 'pending', line };
}

/** A running Pod, and the Pod a rollout would create for it (`candidate`, at `source` in the input). */
interface Recreated {
  readonly identity: PodIdentity;
  readonly running: PodFacts;
  readonly candidate: unknown;
  readonly source: string;
}

/** The Pod a rollout would create for a running Pod, run through the engine as admission runs it. */
function evaluatePod(state: ReportState, { identity, running, candidate, source }: Recreated): MutationOutcome {
  const { options } = state;
  const requestUid = identity.uid || `${identity.namespace}/${identity.name || identity.generateName}`;
  const evaluate = (explain: boolean) =>
    reviewPod(
      {
        pod: candidate,
        namespace: identity.namespace,
        ruleSet: state.ruleSet,
        context: withRecordedCapacity({ requestUid }, running.annotations[CAPACITY_ANNOTATION]),
      },
      {
        managedSteps: options.managedSteps ?? [],
        explain,
        source,
        ...(options.enforcement === undefined ? {} : { enforcement: options.enforcement }),
        ...(options.stamps === undefined ? {} : { stamps: options.stamps }),
        capacity: state.capacity,
      },
    );
  // The applied and audited rules are the matched ones. A denial applies none, so only then is the engine asked to
  // explain: recording every rule's evaluation for every Pod would allocate rules x Pods objects.
  const outcome = evaluate(false);
  return outcome.decision === 'denied' ? evaluate(true) : outcome;
}

/** The rules an outcome matched, in application order: applied and audited, or a denial's matched evaluations. */
function matchedRules(state: ReportState, outcome: MutationOutcome): CompiledRule[] {
  if (outcome.decision === 'denied')
    return outcome.evaluations.flatMap((evaluation) => (evaluation.outcome === 'matched' ? [evaluation.rule] : []));
  return [...outcome.applied, ...outcome.audited.map((match) => match.name)]
    .flatMap((name) => state.byName.get(name) ?? [])
    .sort((left, right) => state.order.get(left.name)! - state.order.get(right.name)!);
}

/** A Pod's verdict and its line, with the rules it matched and the managed steps applied to it. */
interface Counted {
  readonly matched: readonly CompiledRule[];
  readonly steps: readonly string[];
  readonly verdict: Exclude<Verdict, 'unaffected'>;
  readonly line: string;
}

/** Counts a verdict on the workload, the totals and each matched rule; keeps its line as a sample. */
function record(state: ReportState, tally: WorkloadTally, { matched, steps, verdict, line }: Counted): void {
  tally.affected = true;
  for (const rule of matched) tally.rules.add(rule.name);
  for (const step of steps) tally.steps.add(step);
  if (line !== '') sample(tally, line);
  tally[verdict] += 1;
  state.totals[verdict] += 1;
  for (const rule of matched) {
    const counts = state.rules.get(rule.name)!;
    counts.matched += 1;
    // Audited rules change no Pod: only their matches count.
    if (counts.enforcement === 'enforce' && verdict !== 'denied') counts[verdict] += 1;
  }
}

/**
 * Keeps a changed Pod's fit on its workload when it is worse than the workload's so far (its words computed only
 * then), and counts a Pod the rules stranded on each enforced rule it matched.
 */
function recordFit(
  state: ReportState,
  tally: WorkloadTally,
  enforced: readonly CompiledRule[],
  fit: NonNullable<MutationOutcome['fit']>,
): void {
  const kind = fit.afterKind;
  if (tally.fit === undefined || FIT_RANK[kind] > FIT_RANK[tally.fit.kind])
    tally.fit = { kind, reason: boundedLine(fit.after.text()) };
  if (!fit.stranded) return;
  for (const rule of enforced) state.rules.get(rule.name)!.unschedulable += 1;
}

/**
 * Counts on each rule held back from the Pod (`if-unschedulable: skip`: it would have stranded it) a match and a Pod it
 * would leave unschedulable; the Pod itself is judged without it, as admission creates it.
 */
function countHeld(state: ReportState, outcome: MutationOutcome): void {
  for (const step of outcome.held ?? []) {
    const counts = state.rules.get(step.name);
    if (counts === undefined) continue;
    counts.matched += 1;
    counts.unschedulable += 1;
  }
}

function addOwner(state: ReportState, object: unknown, path: string): boolean {
  if (isRuntimeClass(object)) {
    const runtimeClass = readRuntimeClass(object, path);
    state.runtimeClasses.set(runtimeClass.name, runtimeClass);
    return true;
  }
  const kind = classifyObject(object, path);
  if (kind === undefined || kind === 'Pod') return false;
  if (kind === 'ControllerRevision') {
    const revision = readControllerRevision(object, path);
    if (revision === undefined) return false;
    if (state.options.namespace !== undefined && (revision.namespace || 'default') !== state.options.namespace)
      return false;
    state.owners.addRevision(revision);
    return true;
  }
  const workload = readWorkloadObject(object, path);
  if (state.options.namespace !== undefined && (workload.namespace || 'default') !== state.options.namespace)
    return false;
  state.owners.add(workload);
  return true;
}

/**
 * The admission plugins' inputs for a running Pod's recreation. Their evidence is the Pod as it arrived at the webhook:
 * rebuilt from its stamp, else the running Pod, less what the rules it records having applied add (the webhook's
 * changes, not a plugin's input) when no stamp rebuilt it.
 */
function admissionOf(
  state: ReportState,
  running: PodFacts,
  template: { readonly pod: Pod; readonly path: string } | undefined,
  path: string,
): AdmissionInputs {
  const { stamps } = state.options;
  const read = (pod: Pod) => podFacts(pod, running.workload.namespace, path);
  const rebuilt = stamps === undefined ? undefined : arrivalFromStamp(running, stamps, read);
  const applied = rebuilt === undefined ? (running.annotations[APPLIED_ANNOTATION] ?? '').split(',') : [];
  const rules = applied.flatMap((name) => state.byName.get(name) ?? []);
  const webhookAdded = {
    tolerations: rules.flatMap((rule) => rule.add.tolerations),
    nodeSelectorKeys: rules.flatMap((rule) => rule.add.nodeSelector.map(([key]) => key)),
  };
  return admissionInputs(
    {
      ...(template === undefined ? {} : { template }),
      running,
      arrived: rebuilt ?? running,
      webhookAdded,
      runtimeClasses: state.runtimeClasses,
    },
    path,
  );
}

function addPod(state: ReportState, pod: unknown, path: string): Verdict | undefined {
  const identity = readPodIdentity(pod, path);
  if (state.options.namespace !== undefined && identity.namespace !== state.options.namespace) return undefined;
  // A finished Pod is never scheduled again: no rollout recreates it, so it is no part of what a rollout changes.
  if (identity.phase === 'Succeeded' || identity.phase === 'Failed') return undefined;
  state.totals.pods += 1;
  const origin = state.owners.resolve(identity);
  if (origin.origin === 'daemonset') {
    state.totals.unaffected += 1;
    return 'unaffected';
  }
  const running = podFacts(pod, identity.namespace, path);
  const fromTemplate = origin.origin === 'template';
  const source = fromTemplate ? templatePath(origin) : path;
  const template = fromTemplate ? { pod: podFromWorkload(origin.workload, origin.options), path: source } : undefined;
  const inputs = admissionOf(state, running, template, path);
  // What the plugins before the webhook make of the Pod a rollout sends; a Pod recreated from its own spec carries it,
  // without what binding it to its Node added.
  const first =
    template === undefined
      ? { pod: asRecreated(running.pod), refusal: undefined }
      : asAdmitted(template.pod, inputs, source);
  const outcome = evaluatePod(state, { identity, running, candidate: first.pod, source });
  const tally = tallyOf(state, outcome.workload);
  tally.pods += 1;
  countHeld(state, outcome);
  const matched = matchedRules(state, outcome);
  const steps = outcome.applied.filter((name) => !state.byName.has(name));
  if (outcome.decision === 'skipped' || (matched.length === 0 && steps.length === 0 && outcome.decision !== 'denied')) {
    state.totals.unaffected += 1;
    return 'unaffected';
  }
  const enforced = matched.filter((rule) => !state.auditAll && rule.enforcement !== 'audit');
  const judged = verdictOf(outcome, { running, enforced, source, admission: { inputs, refusal: first.refusal } });
  if (judged.verdict === 'pending' && origin.deletion !== undefined) planDeletion(tally, identity, origin.deletion);
  record(state, tally, { matched, steps, ...judged });
  // A denied Pod is never created, so it runs nowhere: only the Pods a rollout would create are judged.
  if (outcome.fit !== undefined && judged.verdict !== 'denied') recordFit(state, tally, enforced, outcome.fit);
  return judged.verdict;
}

/** A pending Pod of a StatefulSet only deletion rolls out: to delete, with the uid it was read with, or the workload held. */
function planDeletion(tally: WorkloadTally, identity: PodIdentity, deletion: Deletion): void {
  if (!deletion.safe) tally.held ??= deletion.hold;
  // Without the uid the deletion could not be preconditioned on this incarnation of the Pod.
  else if (identity.uid === '')
    tally.held ??= `Pod ${identity.name} has no metadata.uid in the input: its deletion could not be preconditioned on it`;
  else (tally.deletePods ??= []).push({ name: identity.name, uid: identity.uid });
}

function workloadRow(state: ReportState, tally: WorkloadTally): ReportWorkload {
  return {
    namespace: tally.workload.namespace,
    kind: tally.workload.kind,
    name: tally.workload.name,
    pods: tally.pods,
    current: tally.current,
    pending: tally.pending,
    denied: tally.denied,
    rules: [
      ...[...tally.rules].sort((left, right) => state.order.get(left)! - state.order.get(right)!),
      ...tally.steps,
    ],
    change: changeOf(tally),
    ...(tally.fit === undefined ? {} : { fit: { ...tally.fit } }),
    ...(tally.held !== undefined
      ? { held: tally.held }
      : tally.deletePods === undefined
        ? {}
        : { deletePods: byOrdinalDescending(tally.workload.name, tally.deletePods) }),
  };
}

function resultOf(state: ReportState): MigrationReport {
  const listed: ReportWorkload[] = [...state.workloads.values()]
    .filter((tally) => tally.affected)
    .sort(
      (left, right) =>
        compareCodeUnits(left.workload.namespace, right.workload.namespace) ||
        compareCodeUnits(left.workload.kind, right.workload.kind) ||
        compareCodeUnits(left.workload.name, right.workload.name),
    )
    .map((tally) => workloadRow(state, tally));
  const ruleRows: ReportRule[] = [...state.rules.values()].map(
    ({ rule, enforcement, matched, current, pending, unschedulable }) => ({
      name: rule.name,
      enforcement,
      matched,
      current,
      pending,
      unschedulable,
    }),
  );
  return { rules: ruleRows, workloads: listed, totals: { ...state.totals } };
}

/**
 * A report builder over a rule set: for each running Pod, the Pod a rollout would create (from its workload's current
 * template, found through the controller ownerReferences, or for a StatefulSet only deletion rolls out the template of
 * the revision a deleted Pod comes back at; the running Pod itself when there is none), run through the engine as
 * admission runs it, and compared with the running Pod. Throws MalformedInputError naming the field of an object or
 * Pod that is not well formed.
 */
function createReport(ruleSet: RuleSet, options: ReportOptions = {}): ReportBuilder {
  const auditAll = options.enforcement === 'audit';
  const state: ReportState = {
    ruleSet,
    options,
    capacity: new RememberedCapacity(options.capacity ?? Capacity.unknown()),
    auditAll,
    owners: createOwnerIndex(),
    runtimeClasses: new Map(),
    byName: new Map(ruleSet.rules.map((rule) => [rule.name, rule])),
    order: new Map(ruleSet.rules.map((rule, index) => [rule.name, index])),
    rules: new Map<string, RuleTally>(
      ruleSet.rules
        .filter((rule) => rule.enabled)
        .map((rule) => [
          rule.name,
          {
            rule,
            enforcement: auditAll ? 'audit' : rule.enforcement,
            matched: 0,
            current: 0,
            pending: 0,
            unschedulable: 0,
          },
        ]),
    ),
    workloads: new Map(),
    totals: { pods: 0, unaffected: 0, current: 0, pending: 0, denied: 0 },
  };
  return {
    addOwner: (object: unknown, path = 'object') => addOwner(state, object, path),
    addPod: (pod: unknown, path = 'pod') => addPod(state, pod, path),
    result: () => resultOf(state),
  };
}

export { createReport };
export type { ReportBuilder, ReportOptions };
