import { APPLIED_ANNOTATION, AUDITED_ANNOTATION, LIMITS, type Enforcement } from '../api/index.ts';
import { LimitExceededError } from '../errors/index.ts';
import type { Pod } from './pod-shape.ts';
import { diffJson, type JsonPatchOperation } from '../patch/index.ts';
import {
  andTerms,
  appendPreferences,
  canonicalizeTerms,
  dropEmptyTerms,
  isEmptyTerm,
  preference,
  productSize,
  requirementCount,
  termCanMatchSomeNode,
  tolerationIdentity,
  withoutKeys,
  type Term,
} from '../scheduling/index.ts';
import { matchingRules, matchRule, type MatchDimension } from './match.ts';
import type { PodFacts } from './pod.ts';
import type { AffinitySelector, CompiledRule, RuleSet } from './compile.ts';
import { currentNodeAffinity, INITIAL_STATE, podWithState, sameAffinity, type SchedulingState } from './state.ts';
import type { StampVerdict } from './stamp.ts';
import type { Workload } from './workload.ts';
import type { MutationContext } from './context.ts';
import type { Verdict } from '../capacity/index.ts';
import { FitJudge, type CapacityJudge, type FitPair, type Judged } from './fit.ts';

/** The result of one step: a new state, or a denial when a safety limit would be exceeded. */
export type StepResult = { readonly state: SchedulingState } | { readonly denied: LimitExceededError };

/**
 * A product-managed step run after every customer rule (the capacity placement hook). It returns
 * undefined when it does not apply to the Pod; its name is recorded in the applied annotation.
 */
export interface ManagedStep {
  readonly name: string;
  apply(state: SchedulingState, facts: PodFacts, context: MutationContext): StepResult | undefined;
}

/** How one rule fared against the Pod (recorded only when asked to explain). */
interface RuleEvaluation {
  readonly rule: CompiledRule;
  readonly outcome: 'matched' | 'disabled' | 'not-matched';
  readonly failed?: MatchDimension;
}

/** What the rule pass runs besides the customer rules, under which switch, and whether it records every rule's evaluation. */
export interface RulePassOptions {
  readonly managedSteps?: readonly ManagedStep[];
  /** Record every rule's evaluation (for `explain`); off on the admission hot path. */
  readonly explain?: boolean;
  /** The deployment's switch: `audit` audits every customer rule; `enforce` (default) leaves it to each rule. */
  readonly enforcement?: Enforcement;
  /**
   * The cluster's Nodes and NodePools: a Pod the review changes is judged against them before and after
   * (MutationOutcome.fit), and a step that would leave a Pod that fit fitting nowhere is held back when its rule says
   * `if-unschedulable: skip` (managed steps always are). Without it nothing is judged.
   */
  readonly capacity?: CapacityJudge;
}

/** A rule or managed step not applied because it would have left a Pod that fit fitting nowhere. */
interface HeldStep {
  readonly name: string;
  /** The step as warnings name it: `PodMutation "x"` or `managed step "managed:capacity"`. */
  readonly subject: string;
  /** Where the Pod would have fitted had it been applied: nowhere, and why. */
  readonly verdict: Verdict;
}

/**
 * An audited rule that matched: what enforcing it would change, measured on the Pod as the enforced rules before it
 * left it (the patch operations and the fields they touch), or the denial enforcing it would cause.
 */
export interface AuditedMatch {
  readonly name: string;
  readonly operations: number;
  /** The changed Pod fields (nodeSelector, tolerations, nodeAffinity, annotations), in the order of the patch. */
  readonly fields: readonly string[];
  readonly denial?: string;
}

/** What the engine decided for one Pod. */
export type Decision = 'mutated' | 'unchanged' | 'denied' | 'skipped';

/** The engine's answer: the decision, the resulting Pod, and what it did and why. */
export interface MutationOutcome {
  readonly decision: Decision;
  readonly workload: Workload;
  /** The resulting Pod; the incoming Pod object itself when nothing changed. */
  readonly pod: Pod;
  /** The JSON Patch from the incoming Pod to `pod`; empty when nothing changed. */
  readonly patch: readonly JsonPatchOperation[];
  /** The enforced rules and managed steps applied, in order. */
  readonly applied: readonly string[];
  /** The audited rules that matched, in application order; none of their changes is in `pod`. */
  readonly audited: readonly AuditedMatch[];
  /** Every rule's evaluation in application order; empty unless `explain` was asked for. */
  readonly evaluations: readonly RuleEvaluation[];
  readonly facts: PodFacts;
  readonly warnings: readonly string[];
  readonly denial?: LimitExceededError;
  readonly skipReason?: string;
  /** What became of the stamp the Pod arrived with; only when stamps are on (MutationOptions.stamps). */
  readonly stamp?: StampVerdict;
  /** Where the Pod fitted as it came and fits as changed: only when capacity was given and the Pod changed. */
  readonly fit?: FitPair;
  /** The rules and managed steps held back because they would have stranded the Pod; only when some were. */
  readonly held?: readonly HeldStep[];
}

// Node affinity is replaced whole rather than patched term by term: index operations are fragile.
const WHOLE_SUBTREES: ReadonlySet<string> = new Set([
  '/spec/affinity/nodeAffinity',
  '/spec/tolerations',
  '/spec/topologySpreadConstraints',
]);
const MAX_WARNINGS = 4;
const MAX_WARNING_LENGTH = 255;

/** A warning cut to under 256 characters. */
function warningText(message: string): string {
  return message.length > MAX_WARNING_LENGTH ? `${message.slice(0, MAX_WARNING_LENGTH - 1)}…` : message;
}

/** Adds an AdmissionReview warning to the state (at most a few, each under 256 characters). Pure. */
export function warn(state: SchedulingState, message: string): SchedulingState {
  if (state.warnings.length >= MAX_WARNINGS) return state;
  return { ...state, warnings: [...state.warnings, warningText(message)] };
}

function removeNodeAffinity(affinity: AffinitySelector, rule: CompiledRule): AffinitySelector {
  // all: true removes required and preferred node affinity and nothing else.
  if (rule.remove.nodeAffinityAll) return { required: undefined, preferred: [] };
  const keys = rule.remove.nodeAffinityKeys;
  const preferred = affinity.preferred
    .map((item) => ({ item, term: withoutKeys(item.term, keys) }))
    // A preferred term left empty by the removal is removed.
    .filter(({ term }) => !isEmptyTerm(term))
    .map(({ item, term }) => (term === item.term ? item : preference(item.weight, term)));
  if (affinity.required === undefined) return { required: undefined, preferred };
  const required = affinity.required.map((term) => withoutKeys(term, keys));
  if (required.every((term, index) => term === affinity.required![index]))
    return { required: affinity.required, preferred };
  // A required term that had requirements and is left with none would select no node: clear the whole required selector.
  const emptied = required.some((term, index) => isEmptyTerm(term) && !isEmptyTerm(affinity.required![index]!));
  if (emptied) return { required: undefined, preferred };
  // The same canonical form an AND reaches, so that a later AND on a second review finds nothing to drop.
  return { required: canonicalizeTerms(required), preferred };
}

/** Who is changing the Pod, for denials and warnings: a customer rule or a managed step. */
interface StepOwner {
  readonly name: string;
  readonly subject: string;
}

function ruleOwner(rule: CompiledRule): StepOwner {
  return { name: rule.name, subject: `PodMutation "${rule.name}"` };
}

function exceeded(owner: StepOwner, limit: string, actual: number, maximum: number): StepResult {
  return { denied: new LimitExceededError({ rule: owner.name, limit, actual, maximum, subject: owner.subject }) };
}

/**
 * ANDs `added` into the state's required node affinity: the added terms when there is none,
 * else the canonicalized Cartesian product, within the runtime limits (a denial otherwise). Pure.
 */
export function andRequiredAffinity(
  state: SchedulingState,
  facts: PodFacts,
  owner: StepOwner,
  added: readonly Term[],
): StepResult {
  const affinity = currentNodeAffinity(state, facts);
  let combined: readonly Term[];
  if (affinity.required === undefined) combined = canonicalizeTerms(added);
  else {
    const usable = dropEmptyTerms(affinity.required);
    if (usable.every(isEmptyTerm)) {
      // Every term selects no node; an AND must not broaden that, so the selector stays and we warn.
      return {
        state: warn(
          state,
          `${owner.subject}: the Pod's required node affinity has only empty terms and matches no node; left unchanged`,
        ),
      };
    }
    const intermediate = productSize(usable, added);
    if (intermediate > LIMITS.intermediateRequiredTerms) {
      return exceeded(
        owner,
        'intermediate required terms before canonicalization',
        intermediate,
        LIMITS.intermediateRequiredTerms,
      );
    }
    combined = andTerms(usable, added);
  }
  if (combined.length > LIMITS.combinedRequiredTerms) {
    return exceeded(
      owner,
      'required node selector terms after combining',
      combined.length,
      LIMITS.combinedRequiredTerms,
    );
  }
  const widest = Math.max(...combined.map(requirementCount));
  if (widest > LIMITS.combinedRequirementsPerTerm) {
    return exceeded(owner, 'requirements in one combined required term', widest, LIMITS.combinedRequirementsPerTerm);
  }
  return { state: { ...state, nodeAffinity: { ...affinity, required: combined } } };
}

function applyNodeAffinity(state: SchedulingState, rule: CompiledRule, facts: PodFacts): StepResult {
  let next = state;
  if (rule.remove.nodeAffinityAll || rule.remove.nodeAffinityKeys.size > 0) {
    next = { ...next, nodeAffinity: removeNodeAffinity(currentNodeAffinity(next, facts), rule) };
  }
  const added = rule.add.nodeAffinity;
  if (added?.required !== undefined) {
    const result = andRequiredAffinity(next, facts, ruleOwner(rule), added.required);
    if ('denied' in result) return result;
    next = result.state;
  }
  if (added !== undefined && added.preferred.length > 0) {
    const affinity = currentNodeAffinity(next, facts);
    const preferred = appendPreferences(affinity.preferred, added.preferred);
    if (preferred.length > LIMITS.combinedPreferredTerms) {
      return exceeded(
        ruleOwner(rule),
        'preferred node affinity terms after combining',
        preferred.length,
        LIMITS.combinedPreferredTerms,
      );
    }
    next = { ...next, nodeAffinity: { ...affinity, preferred } };
  }
  return { state: next };
}

function applyMaps(state: SchedulingState, rule: CompiledRule, facts: PodFacts): SchedulingState {
  let next = state;
  const { remove, add } = rule;
  if (remove.nodeSelectorKeys.length > 0 || add.nodeSelector.length > 0) {
    const nodeSelector: Record<string, string> = { ...(state.nodeSelector ?? facts.nodeSelector) };
    for (const key of remove.nodeSelectorKeys) delete nodeSelector[key];
    for (const [key, value] of add.nodeSelector) nodeSelector[key] = value;
    next = { ...next, nodeSelector };
  }
  if (remove.tolerationKeys.size > 0 || add.tolerations.length > 0) {
    const tolerations = (state.tolerations ?? facts.tolerations).filter(
      (item) => !remove.tolerationKeys.has(item.key ?? ''),
    );
    const present = new Set(tolerations.map(tolerationIdentity));
    for (const toleration of add.tolerations) {
      const identity = tolerationIdentity(toleration);
      if (present.has(identity)) continue;
      present.add(identity);
      tolerations.push(toleration);
    }
    next = { ...next, tolerations };
  }
  if (add.annotations.length > 0) {
    const annotations: Record<string, string> = { ...(state.annotations ?? facts.annotations) };
    for (const [key, value] of add.annotations) annotations[key] = value;
    next = { ...next, annotations };
  }
  return next;
}

/** Applies one matching rule: mutationRemove, then mutationAdd. Pure. */
function applyRule(state: SchedulingState, rule: CompiledRule, facts: PodFacts): StepResult {
  const affinity = applyNodeAffinity(state, rule, facts);
  if ('denied' in affinity) return affinity;
  return { state: applyMaps(affinity.state, rule, facts) };
}

function rawLimitDenial(rule: string, facts: PodFacts): LimitExceededError | undefined {
  const { terms, widestTerm } = facts.rawRequired;
  if (terms > LIMITS.rawRequiredTerms) {
    return new LimitExceededError({
      rule,
      limit: 'required node selector terms on the incoming Pod',
      actual: terms,
      maximum: LIMITS.rawRequiredTerms,
    });
  }
  if (widestTerm > LIMITS.rawRequirementsPerTerm) {
    return new LimitExceededError({
      rule,
      limit: 'requirements in one required term on the incoming Pod',
      actual: widestTerm,
      maximum: LIMITS.rawRequirementsPerTerm,
    });
  }
  return undefined;
}

function unsatisfiableTermWarnings(state: SchedulingState, facts: PodFacts): SchedulingState {
  if (state.nodeAffinity === undefined || sameAffinity(state.nodeAffinity, facts.nodeAffinity)) return state;
  const terms = state.nodeAffinity.required ?? [];
  const impossible = terms.flatMap((term, index) => (isEmptyTerm(term) || termCanMatchSomeNode(term) ? [] : [index]));
  if (impossible.length === 0) return state;
  const listed = impossible.slice(0, 8).join(', ') + (impossible.length > 8 ? ', …' : '');
  return warn(
    state,
    `required node affinity term(s) ${listed} of the mutated Pod can match no node (contradictory requirements on one key)`,
  );
}

/**
 * A product annotation listing rule names after this review (the applied one, or the audited one): the names already
 * on the Pod, in their order, then the names of this review that it does not list yet. It records the rules over the
 * Pod's life, so a re-review that matches a subset of them changes nothing.
 */
function recordedNames(facts: PodFacts, key: string, names: readonly string[]): string {
  const recorded = facts.annotations[key];
  if (recorded === undefined || recorded === '') return names.join(',');
  const listed = recorded.split(',').filter((name) => name !== '');
  const known = new Set(listed);
  const added = names.filter((name) => !known.has(name));
  return added.length === 0 ? recorded : [...listed, ...added].join(',');
}

/** The Pod field a patch path changes, named as AuditedMatch.fields names it. */
function changedField(path: string): string {
  const [, root, field = '', nested] = path.split('/');
  if (root === 'spec' && field === 'affinity') return nested ?? 'nodeAffinity';
  return field === '' ? (root ?? '') : field;
}

/** What enforcing an audited rule would change on the state the enforced rules before it left. Pure. */
function auditRule(state: SchedulingState, rule: CompiledRule, facts: PodFacts): AuditedMatch {
  const result = applyRule(state, rule, facts);
  if ('denied' in result) return { name: rule.name, operations: 0, fields: [], denial: result.denied.message };
  const operations = diffJson(podWithState(facts, state), podWithState(facts, result.state), WHOLE_SUBTREES);
  return {
    name: rule.name,
    operations: operations.length,
    fields: [...new Set(operations.map((operation) => changedField(operation.path)))],
  };
}

/** What every outcome of one Pod shares: the Pod as it arrived, and the facts the rules were matched against. */
export type OutcomeBase = Pick<MutationOutcome, 'workload' | 'facts' | 'pod' | 'patch' | 'warnings' | 'stamp'>;

/** How a review ended before any Pod was sent: a limit denied it, or audited rules recorded the denial they would cause. */
type EndedPass = Pick<MutationOutcome, 'decision' | 'applied' | 'audited' | 'evaluations' | 'denial'>;

/** The end of a review that a limit denied: nothing applied. */
export function denied(
  audited: readonly AuditedMatch[],
  evaluations: readonly RuleEvaluation[],
  denial: LimitExceededError,
): EndedPass {
  return { decision: 'denied', applied: [], audited, evaluations, denial };
}

/** True when a matched rule is only audited: the deployment audits every rule, or the rule says so. */
function isAudited(rule: CompiledRule, auditAll: boolean): boolean {
  return auditAll || rule.enforcement === 'audit';
}

/** Matches every rule, recording each one's evaluation for `explain`; returns the enabled rules that matched, in order. */
function evaluateEveryRule(ruleSet: RuleSet, facts: PodFacts, evaluations: RuleEvaluation[]): CompiledRule[] {
  const matched: CompiledRule[] = [];
  for (const rule of ruleSet.rules) {
    if (!rule.enabled) {
      evaluations.push({ rule, outcome: 'disabled' });
      continue;
    }
    const failed = matchRule(rule, facts);
    if (failed === undefined) matched.push(rule);
    evaluations.push(failed === undefined ? { rule, outcome: 'matched' } : { rule, outcome: 'not-matched', failed });
  }
  return matched;
}

/** The matched rules, their evaluations, the Pod's facts and whether the deployment audits every rule. */
interface Matched {
  readonly matched: readonly CompiledRule[];
  readonly evaluations: readonly RuleEvaluation[];
  readonly facts: PodFacts;
  readonly auditAll: boolean;
}

/** The end of the review when the Pod itself is over a limit, or undefined when it is not. */
function rawLimitEnd({ matched, evaluations, facts, auditAll }: Matched): EndedPass | undefined {
  const enforced = matched.find((rule) => !isAudited(rule, auditAll));
  const rawDenial = rawLimitDenial((enforced ?? matched[0]!).name, facts);
  if (rawDenial === undefined) return undefined;
  // Audit never denies: the audited rules record the denial that enforcing them would cause.
  if (enforced !== undefined) return denied([], evaluations, rawDenial);
  const would = matched.map((rule) => ({
    name: rule.name,
    operations: 0,
    fields: [],
    denial: rawLimitDenial(rule.name, facts)!.message,
  }));
  return { decision: 'unchanged', applied: [], audited: would, evaluations };
}

interface Applied {
  readonly state: SchedulingState;
  readonly applied: readonly string[];
  readonly audited: readonly AuditedMatch[];
  readonly held: readonly HeldStep[];
}

/**
 * Holds back the steps that would strand the Pod: a step judged (a rule saying `if-unschedulable: skip`, or a managed
 * step) whose result fits nowhere while the state before it did not. The verdict of the current state is kept, so a
 * run of judged steps judges each state once.
 */
class StrandGuard {
  readonly held: HeldStep[] = [];
  private current: Judged | undefined;
  private fresh = true;

  constructor(private readonly judge: FitJudge | undefined) {}

  /** True when the step is judged and going from `state` to `next` would strand the Pod: the step is then held back. */
  holds(owner: StepOwner, judged: boolean, state: SchedulingState, next: SchedulingState): boolean {
    if (this.judge === undefined || !judged) {
      this.current = undefined;
      this.fresh = false;
      return false;
    }
    const from = this.current ?? (this.fresh ? this.judge.before() : this.judge.judge(state));
    const after = this.judge.judge(next);
    if (after.strands(from)) {
      this.held.push({ ...owner, verdict: after.verdict });
      this.current = from;
      return true;
    }
    this.current = after;
    this.fresh = false;
    return false;
  }
}

/** The matched rules applied in order (the audited ones recorded), then the managed steps; or the first denial. */
function applyAll(
  { matched, facts, auditAll }: Matched,
  context: MutationContext,
  managedSteps: readonly ManagedStep[],
  judge: FitJudge | undefined,
): Applied | { readonly denied: LimitExceededError; readonly audited: readonly AuditedMatch[] } {
  let state = INITIAL_STATE;
  const applied: string[] = [];
  const audited: AuditedMatch[] = [];
  const guard = new StrandGuard(judge);
  for (const rule of matched) {
    if (isAudited(rule, auditAll)) {
      audited.push(auditRule(state, rule, facts));
      continue;
    }
    const result = applyRule(state, rule, facts);
    if ('denied' in result) return { denied: result.denied, audited };
    if (guard.holds(ruleOwner(rule), rule.ifUnschedulable === 'skip', state, result.state)) continue;
    state = result.state;
    applied.push(rule.name);
  }
  // Managed capacity placement runs after every customer rule; the product's own step never strands a Pod.
  for (const step of managedSteps) {
    const result = step.apply(state, facts, context);
    if (result === undefined) continue;
    if ('denied' in result) return { denied: result.denied, audited };
    if (guard.holds({ name: step.name, subject: `managed step "${step.name}"` }, true, state, result.state)) continue;
    state = result.state;
    applied.push(step.name);
  }
  return { state, applied, audited, held: guard.held };
}

/** The state with the applied and audited annotations recorded, and the warnings of unsatisfiable terms and held steps. */
function recorded(facts: PodFacts, { state, applied, audited, held }: Applied): SchedulingState {
  let next = state;
  for (const step of held) next = warn(next, heldWarning(step));
  if (applied.length > 0) {
    next = unsatisfiableTermWarnings(next, facts);
    const annotations = {
      ...(next.annotations ?? facts.annotations),
      [APPLIED_ANNOTATION]: recordedNames(facts, APPLIED_ANNOTATION, applied),
    };
    next = { ...next, annotations };
  }
  if (audited.length > 0) {
    const names = audited.map((match) => match.name);
    const annotations = {
      ...(next.annotations ?? facts.annotations),
      [AUDITED_ANNOTATION]: recordedNames(facts, AUDITED_ANNOTATION, names),
    };
    next = { ...next, annotations };
  }
  return next;
}

// What a fit verdict judges, in few words: a warning has 255 characters and kubectl prints it to whoever created the Pod.
const JUDGED_ON = 'by node labels, taints and cordons';

/** The warning of a step held back because it would have stranded the Pod. */
function heldWarning(step: HeldStep): string {
  return `${step.subject} not applied (if-unschedulable: skip): with it the Pod ${JUDGED_ON} ${step.verdict.text()}`;
}

/**
 * Where the Pod fitted and fits, for a Pod the review changed; with the warning first when the change stranded it
 * (the most important thing a review can say, so it goes before the others' cap).
 */
function judged(
  judge: FitJudge | undefined,
  state: SchedulingState,
  applied: readonly string[],
): { readonly fit?: FitPair; readonly warnings: readonly string[] } {
  if (judge === undefined) return { warnings: state.warnings };
  const fit = judge.pair(state);
  if (!fit.stranded) return { fit, warnings: state.warnings };
  const stranded = warningText(
    `the Pod fit before PodMutation ${applied.join(', ')} and ${JUDGED_ON} now ${fit.after.text()}`,
  );
  return { fit, warnings: [stranded, ...state.warnings].slice(0, MAX_WARNINGS) };
}

/** What the rules made of a Pod: the state and the Pod it leaves, the steps applied, audited and held back. */
interface RulePass extends Applied {
  readonly facts: PodFacts;
  /** The Pod as the state leaves it. */
  readonly pod: Pod;
  readonly evaluations: readonly RuleEvaluation[];
  readonly judge: FitJudge | undefined;
}

/**
 * The rule pass on one Pod's facts: matches every rule against the Pod as it came, applies the matching enabled rules
 * in order (remove, then add), then the managed steps. Ends early when a limit denies the review. Pure.
 */
export function mutatePod(
  facts: PodFacts,
  ruleSet: RuleSet,
  context: MutationContext,
  options: RulePassOptions = {},
): RulePass | { readonly ended: EndedPass } {
  // All rules are matched against the original Pod before any mutation: through the index, or every rule to explain.
  const evaluations: RuleEvaluation[] = [];
  const rules = options.explain ? evaluateEveryRule(ruleSet, facts, evaluations) : matchingRules(ruleSet, facts);
  const matched: Matched = { matched: rules, evaluations, facts, auditAll: options.enforcement === 'audit' };
  const overLimit = rules.length > 0 ? rawLimitEnd(matched) : undefined;
  if (overLimit !== undefined) return { ended: overLimit };
  const judge = options.capacity === undefined ? undefined : new FitJudge(options.capacity, facts);
  const done = applyAll(matched, context, options.managedSteps ?? [], judge);
  if ('denied' in done) return { ended: denied(done.audited, evaluations, done.denied) };
  const state = recorded(facts, done);
  return { ...done, state, facts, pod: podWithState(facts, state), evaluations, judge };
}

/**
 * The outcome of a rule pass whose Pod is sent as `sent` in answer to the Pod as it arrived (`base.pod`): the patch
 * between them and, for a Pod the review changed, where it fitted and fits.
 */
export function passOutcome(base: OutcomeBase, pass: RulePass, sent: Pod): MutationOutcome {
  const patch = diffJson(base.pod, sent, WHOLE_SUBTREES);
  // Judged only for a Pod the review changed: the check's cost stays off every other review.
  const { fit, warnings } = judged(patch.length > 0 ? pass.judge : undefined, pass.state, pass.applied);
  return {
    ...base,
    decision: patch.length > 0 ? 'mutated' : 'unchanged',
    pod: patch.length > 0 ? sent : base.pod,
    patch,
    applied: pass.applied,
    audited: pass.audited,
    evaluations: pass.evaluations,
    warnings,
    ...(fit === undefined ? {} : { fit }),
    ...(pass.held.length === 0 ? {} : { held: pass.held }),
  };
}
