import { Option, type Command } from 'commander';
import type { Capacity } from '../capacity/index.ts';
import { compileRuleSet, describeMismatch, mutatePod, type MutationOutcome } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { parseResourceDocuments } from '../rule-files/index.ts';
import { KEYLESS_STAMPS } from '../stamp/index.ts';
import { podInputs, type PodInput } from '../workloads/index.ts';
import { defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import { colourWanted, schedulingDiff } from './diff.ts';
import { readInput, writeLine } from './io.ts';
import {
  capacityOption,
  fitCaveatLine,
  fitDocument,
  fitLines,
  fitShown,
  readCapacityFiles,
  type CapacityFlags,
} from './options/capacity.ts';
import { auditedLines, enforcementOf, enforcementOption } from './options/enforcement.ts';
import { placementOptions, placementSteps, type PlacementFlags } from './options/placement-file.ts';
import {
  allowEmptyOption,
  excludeOption,
  ruleLoadOptions,
  loadRulesReportingInvalid,
  rulesOption,
} from './options/rules.ts';
import { outputOption, printDocument, type OutputFormat } from './output.ts';

interface ExplainFlags extends PlacementFlags, CapacityFlags {
  readonly rules?: string[];
  readonly allowEmpty?: boolean;
  readonly exclude?: string[];
  readonly namespace?: string;
  readonly enforcement: string;
  readonly output: OutputFormat;
}

/** One Pod of `explain -o json|yaml`: the documented, stable shape (docs/cli.md). */
interface ExplainedPod {
  readonly source: string;
  readonly namespace: string;
  readonly name: string;
  readonly workload: { readonly kind: string; readonly name: string };
  readonly decision: MutationOutcome['decision'] | 'rejected';
  readonly matched: readonly string[];
  readonly applied: readonly string[];
  readonly audited: MutationOutcome['audited'];
  readonly notMatched: readonly { readonly rule: string; readonly dimension: string; readonly reason: string }[];
  readonly disabled: readonly string[];
  readonly patch: MutationOutcome['patch'];
  readonly warnings: readonly string[];
  /** Where the changed Pod can run before and after the rules: with --capacity, or when it contradicts itself. */
  readonly fit?: ReturnType<typeof fitDocument>;
  /** The denial, the reason a Pod was skipped, or why the input was rejected; absent otherwise. */
  readonly message?: string;
}

/**
 * The explanation for people: the same facts as the JSON shape, and the change to the scheduling fields as a diff
 * (`diff` is only called for a Pod that was patched).
 */
function describePod(explained: ExplainedPod, diff: () => string[], fit: MutationOutcome['fit']): string[] {
  const { workload, message } = explained;
  if (explained.decision === 'rejected') return [`Pod ${explained.source}`, `  rejected: ${message!}`];
  const lines = [
    `Pod ${explained.namespace}/${explained.name || '(unnamed)'} (workload ${workload.kind} ${workload.name})`,
  ];
  if (explained.decision === 'skipped') return [...lines, `  skipped: ${message!}`];
  lines.push(explained.matched.length === 0 ? '  matched: none' : '  matched, in application order:');
  for (const name of explained.matched) lines.push(`    ${name}`);
  // Audited rules are listed apart: they matched, and none of their changes is in the result below.
  for (const line of auditedLines(explained.audited)) lines.push(`  ${line}`);
  if (explained.notMatched.length > 0) lines.push('  not matched (first dimension that failed):');
  for (const { rule, dimension, reason } of explained.notMatched) lines.push(`    ${rule}: ${dimension}: ${reason}`);
  if (explained.disabled.length > 0)
    lines.push(`  disabled (spec.enable is not true): ${explained.disabled.join(', ')}`);
  if (explained.decision === 'denied') return [...lines, `  denied: ${message!}`];
  const { patch } = explained;
  lines.push(
    `  result: ${explained.decision}${patch.length > 0 ? ` (${patch.length} patch operation${patch.length === 1 ? '' : 's'})` : ''}`,
  );
  if (patch.length > 0) {
    lines.push('  changes to the scheduling fields (- before, + after):');
    for (const line of diff()) lines.push(`    ${line}`);
  }
  if (explained.fit !== undefined && fit !== undefined)
    lines.push('  where it can run:', ...fitLines(fit).map((line) => `    ${line}`));
  for (const warning of explained.warnings) lines.push(`  warning: ${warning}`);
  return lines;
}

/** The Pod's explanation in the JSON shape. */
function explainedPod(input: PodInput, outcome: MutationOutcome, capacity: Capacity): ExplainedPod {
  const fit = fitShown(outcome.fit, capacity.known) ? fitDocument(outcome.fit) : undefined;
  const auditedNames = new Set(outcome.audited.map((match) => match.name));
  const message = outcome.denial?.message ?? outcome.skipReason;
  return {
    source: input.origin,
    namespace: outcome.workload.namespace,
    name: outcome.facts.displayName,
    workload: { kind: outcome.workload.kind, name: outcome.workload.name },
    decision: outcome.decision,
    matched: outcome.evaluations
      .filter((item) => item.outcome === 'matched' && !auditedNames.has(item.rule.name))
      .map((item) => item.rule.name),
    applied: outcome.applied,
    audited: outcome.audited,
    notMatched: outcome.evaluations
      .filter((item) => item.outcome === 'not-matched')
      .map((item) => ({
        rule: item.rule.name,
        dimension: item.failed!,
        reason: describeMismatch(item.rule, outcome.facts, item.failed!),
      })),
    disabled: outcome.evaluations.filter((item) => item.outcome === 'disabled').map((item) => item.rule.name),
    patch: outcome.patch,
    warnings: outcome.warnings,
    ...(fit === undefined ? {} : { fit }),
    ...(message === undefined ? {} : { message }),
  };
}

/** A Pod the input boundary rejected, in the JSON shape. */
function rejectedPod(input: PodInput, message: string): ExplainedPod {
  const { metadata } = input.pod;
  const name =
    typeof metadata?.name === 'string'
      ? metadata.name
      : typeof metadata?.generateName === 'string'
        ? metadata.generateName
        : '';
  return {
    source: input.origin,
    namespace: input.namespace,
    name,
    workload: { kind: '', name: '' },
    decision: 'rejected',
    matched: [],
    applied: [],
    audited: [],
    notMatched: [],
    disabled: [],
    patch: [],
    warnings: [],
    message,
  };
}

/**
 * For each Pod of the input (a Pod, an AdmissionReview, a workload manifest, or a List or YAML stream of them), which
 * rules matched, the first failing dimension of each that did not, and the resulting change.
 */
async function explain(flags: ExplainFlags, given: string | undefined, { streams, env }: CliContext): Promise<number> {
  const source = given ?? '-';
  const colour = colourWanted(streams.stdout, env);
  const loaded = await loadRulesReportingInvalid(flags.rules, streams, ruleLoadOptions(flags));
  const ruleSet = compileRuleSet(loaded.rules);
  const managedSteps = await placementSteps(flags, streams);
  const enforcement = enforcementOf(flags.enforcement);
  const capacity = await readCapacityFiles(flags.capacity ?? [], streams);
  const fallbackNamespace = flags.namespace || 'default';
  const { inputs, skipped } = podInputs(
    parseResourceDocuments(await readInput(given, streams), source),
    source,
    fallbackNamespace,
  );
  for (const line of skipped) writeLine(streams.stderr, line);
  if (inputs.length === 0) throw new MalformedInputError(`${source}: no Pod found`);
  const pods: ExplainedPod[] = [];
  inputs.forEach((input, index) => {
    const { pod, namespace, uid: requestUid, origin: where } = input;
    const uid = requestUid ?? pod.metadata?.uid;
    const context = { requestUid: typeof uid === 'string' ? uid : `explain-${index}` };
    const table = flags.output === 'table';
    if (table && index > 0) writeLine(streams.stdout, '');
    // A Pod the boundary rejects is reported in its place; the other Pods are still explained.
    let explained: ExplainedPod;
    let outcome: MutationOutcome | undefined;
    try {
      outcome = mutatePod(pod, namespace, ruleSet, context, {
        explain: true,
        managedSteps,
        enforcement,
        source: where,
        fallbackNamespace,
        stamps: KEYLESS_STAMPS,
        capacity,
        ...(input.passThrough === undefined ? {} : { passThrough: input.passThrough }),
      });
      explained = explainedPod(input, outcome, capacity);
    } catch (error) {
      if (!(error instanceof MalformedInputError)) throw error;
      explained = rejectedPod(input, error.message);
    }
    pods.push(explained);
    if (table)
      for (const line of describePod(explained, () => schedulingDiff(pod, outcome!.pod, colour), outcome?.fit))
        writeLine(streams.stdout, line);
  });
  if (flags.output !== 'table') printDocument(streams.stdout, flags.output, { pods });
  else if (pods.some((pod) => pod.fit !== undefined)) writeLine(streams.stdout, `\n${fitCaveatLine()}`);
  if (pods.some((pod) => pod.decision === 'rejected')) return EXIT.usage;
  const findings =
    pods.some((pod) => pod.decision === 'denied' || pod.fit?.unschedulable === true) || loaded.invalid.length > 0;
  return findings ? EXIT.findings : EXIT.ok;
}

/** `podmutation explain`. */
export function registerExplain(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'explain', {
    summary: 'which rules match each Pod of a Pod, AdmissionReview or workload manifest, and what they change',
    description:
      "For each Pod of the input: a Pod; an AdmissionReview (its request.object, in the request's namespace); a workload " +
      'manifest (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Argo Rollout: the Pod its controller would ' +
      "create from the template, in the manifest's namespace or --namespace); a List or YAML stream of them, as kubectl get " +
      '-o yaml or helm template print them, whose other documents (Services, ConfigMaps) are skipped with a note on stderr. ' +
      'Prints the rules that matched, the first dimension that failed for each that did not, the change to the scheduling ' +
      'fields, warnings or the denial. A Pod the input contract rejects is reported in its place and the others are still explained. ' +
      'Each Pod the rules changed says where it can run before and after them (with --capacity; without it only a Pod ' +
      'whose constraints contradict each other is judged), as admission judges it: the NodePools and Nodes it fits, or ' +
      'why it fits nowhere with the closest candidates and their reasons. Rules annotated if-unschedulable: skip are held ' +
      'back from a Pod they would strand, as admission holds them.',
    examples: [
      'podmutation explain --rules examples/rules test/fixtures/pods/pod-list.json',
      'podmutation explain --rules examples/rules -o json deployment.yaml',
      'podmutation explain --rules rules/ --capacity nodes-and-nodepools.yaml deployment.yaml',
      'helm template ./chart | podmutation explain --rules rules/ -n shop -',
    ],
    exits: {
      0: 'every Pod explained, none denied',
      1: 'some Pod would be denied, the rules turned some Pod that fit somewhere into one that fits nowhere, or some rule is invalid (skipped)',
      2: 'usage error, unreadable rules or input, or a Pod the input contract rejects',
    },
  });
  command
    .argument(
      '[input]',
      'Pod, AdmissionReview or workload manifest file (or a List or YAML stream of them), or - for standard input (the default when input is piped)',
    )
    .addOption(rulesOption())
    .addOption(allowEmptyOption())
    .addOption(excludeOption())
    .addOption(
      new Option('-n, --namespace <namespace>', 'the namespace of Pods and workloads that name none').default(
        undefined,
        'default',
      ),
    )
    .addOption(enforcementOption())
    .addOption(capacityOption('each changed Pod'))
    .addOption(outputOption());
  for (const option of placementOptions()) command.addOption(option);
  onRun<ExplainFlags, [string | undefined]>(command, (flags, [input]) => explain(flags, input, context));
}
