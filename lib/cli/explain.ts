import { Option, type Command } from 'commander';
import type { Capacity } from '../capacity/index.ts';
import { compileRuleSet, describeMismatch, reviewPod, type MutationOutcome } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import type { ChosenPlacement, PlacementStep } from '../placement/index.ts';
import { filesOfPaths } from '../rule-files/index.ts';
import { KEYLESS_STAMPS } from '../stamp/index.ts';
import { podInputOf, type PodInput } from '../workloads/index.ts';
import { defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import { colourWanted, schedulingDiff } from './diff.ts';
import { inputObjects } from './input-objects.ts';
import { checkInputPiped, writeLine } from './io.ts';
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
import { placementOptions, placementStep, type PlacementFlags } from './options/placement-file.ts';
import {
  allowEmptyOption,
  excludeOption,
  ruleLoadOptions,
  loadRulesReportingInvalid,
  someInvalid,
  rulesOption,
} from './options/rules.ts';
import { documentListPrinter, outputOption, type OutputFormat } from './output.ts';

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
  /** The managed placement the Pod gets (with --placements or PodPlacements in the rules paths); absent: none. */
  readonly placement?: ExplainedPlacement;
  /** Where the changed Pod can run before and after the rules: with --capacity, or when it contradicts itself. */
  readonly fit?: ReturnType<typeof fitDocument>;
  /** The denial, the reason a Pod was skipped, or why the input was rejected; absent otherwise. */
  readonly message?: string;
}

/** A Pod's placement in `explain -o json|yaml`: where it was declared, its terms, and what selected it in vain. */
interface ExplainedPlacement {
  /** `PodPlacement "name"`, or `placement policy namespace/Kind/name` for a policy (which wins over PodPlacements). */
  readonly source: string;
  /** The PodPlacement's name; absent for a policy. */
  readonly name?: string;
  readonly mode: ChosenPlacement['mode'];
  readonly spotPercent?: number;
  readonly minOnDemand?: number;
  /** The other enabled PodPlacements that select the Pod, in application order; none of them applies. */
  readonly alsoMatched: readonly string[];
}

function explainedPlacement(chosen: ChosenPlacement | undefined): { placement?: ExplainedPlacement } {
  if (chosen === undefined) return {};
  const { source, placement: name, mode, spotPercent, minOnDemand, alsoMatched } = chosen;
  return {
    placement: {
      source,
      ...(name === undefined ? {} : { name }),
      mode,
      ...(mode === 'Diversity' ? { spotPercent, minOnDemand } : {}),
      alsoMatched,
    },
  };
}

/** The placement lines of a Pod for people: `placement: Spot, from PodPlacement "batch-to-spot"`. */
function placementLines(placement: ExplainedPlacement | undefined): string[] {
  if (placement === undefined) return [];
  const terms =
    placement.mode === 'Diversity'
      ? ` (${placement.spotPercent}% Spot, at least ${placement.minOnDemand} on-demand)`
      : '';
  const lines = [`  placement: ${placement.mode}${terms}, from ${placement.source}`];
  if (placement.alsoMatched.length > 0)
    lines.push(`  placement also selected by, not applied: ${placement.alsoMatched.join(', ')}`);
  return lines;
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
  lines.push(...placementLines(explained.placement));
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

/** The Pod's explanation in the JSON shape; `step` says which placement it gets. */
function explainedPod(
  input: PodInput,
  outcome: MutationOutcome,
  capacity: Capacity,
  step: PlacementStep | undefined,
): ExplainedPod {
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
    // A skipped Pod is left alone, placement included.
    ...(outcome.decision === 'skipped' ? {} : explainedPlacement(step?.choose(outcome.facts))),
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

/** Notes of skipped documents: held until the first Pod (for the error when there is none), then printed as they come. */
function skipNotes(streams: CliContext['streams']) {
  const held: string[] = [];
  let printing = false;
  return {
    add(note: string): void {
      if (printing) writeLine(streams.stderr, note);
      else held.push(note);
    },
    /** Prints the notes held, and each later one as it comes. */
    print(): void {
      if (printing) return;
      printing = true;
      for (const note of held.splice(0)) writeLine(streams.stderr, note);
    },
    /** What the inputs held instead of a Pod, for the error: the notes held, the first few. */
    found(): string {
      const shown = held.slice(0, MAX_NOTES_SHOWN).map((note) => `\n  ${note}`);
      const more = held.length - shown.length;
      return `${shown.join('')}${more > 0 ? `\n  … and ${more} more` : ''}`;
    },
  };
}

const MAX_NOTES_SHOWN = 10;

/**
 * The Pods of explain's inputs, one at a time in order: each file of the paths (a folder's .yaml, .yml and .json
 * files), "-" standard input; a JSON List streamed item by item. Documents that stand for no Pod go to `skip`.
 */
async function* explainInputs(
  paths: readonly string[],
  streams: CliContext['streams'],
  fallbackNamespace: string,
  skip: (note: string) => void,
): AsyncGenerator<PodInput> {
  for (const file of await filesOfPaths(paths, 'input')) {
    let count = 0;
    for await (const object of inputObjects(file, streams)) {
      if (object.type === 'envelope') {
        const { kind } = object.value;
        if (typeof kind === 'string' && !kind.endsWith('List'))
          throw new MalformedInputError(
            `${file}: document ${object.document}: kind ${kind} has items; only the items of a List are read`,
          );
        continue;
      }
      count += 1;
      const read = podInputOf(object.value, `${file}: document ${count}`, fallbackNamespace);
      if ('input' in read) yield read.input;
      else skip(read.skipped);
    }
  }
}

/**
 * For each Pod of the inputs (a Pod, an AdmissionReview, a workload manifest, or a List or YAML stream of them; files,
 * folders, standard input), which rules matched, the first failing dimension of each that did not, and the resulting
 * change, printed as each Pod is read: a List of a whole cluster's Pods is never held.
 */
async function explain(flags: ExplainFlags, given: readonly string[], { streams, env }: CliContext): Promise<number> {
  if (given.length === 0) checkInputPiped(streams);
  const paths = given.length === 0 ? ['-'] : given;
  const colour = colourWanted(streams.stdout, env);
  const loaded = await loadRulesReportingInvalid(flags.rules, streams, ruleLoadOptions(flags));
  const ruleSet = compileRuleSet(loaded.rules);
  const capacity = await readCapacityFiles(flags.capacity ?? [], streams);
  const fallbackNamespace = flags.namespace || 'default';
  const step = await placementStep(flags, streams, loaded.placements.placements);
  const options = {
    explain: true,
    managedSteps: step === undefined ? [] : [step],
    enforcement: enforcementOf(flags.enforcement),
    fallbackNamespace,
    stamps: KEYLESS_STAMPS,
    capacity,
  } as const;
  const table = flags.output === 'table';
  const printer = flags.output === 'table' ? undefined : documentListPrinter(streams.stdout, flags.output, 'pods');
  const notes = skipNotes(streams);
  let count = 0;
  const seen = { rejected: false, findings: someInvalid(loaded), fit: false };
  for await (const input of explainInputs(paths, streams, fallbackNamespace, (note) => notes.add(note))) {
    notes.print();
    const { pod, namespace, uid: requestUid, origin: source } = input;
    const uid = requestUid ?? pod.metadata?.uid;
    const context = { requestUid: typeof uid === 'string' ? uid : `explain-${count}` };
    if (table && count > 0) writeLine(streams.stdout, '');
    count += 1;
    // A Pod the boundary rejects is reported in its place; the other Pods are still explained.
    let explained: ExplainedPod;
    let outcome: MutationOutcome | undefined;
    try {
      const passThrough = input.passThrough === undefined ? {} : { passThrough: input.passThrough };
      outcome = reviewPod({ pod, namespace, ruleSet, context }, { ...options, source, ...passThrough });
      explained = explainedPod(input, outcome, capacity, step);
    } catch (error) {
      if (!(error instanceof MalformedInputError)) throw error;
      explained = rejectedPod(input, error.message);
    }
    seen.rejected ||= explained.decision === 'rejected';
    seen.findings ||= explained.decision === 'denied' || explained.fit?.unschedulable === true;
    seen.fit ||= explained.fit !== undefined;
    if (printer !== undefined) printer.print(explained);
    else
      for (const line of describePod(explained, () => schedulingDiff(pod, outcome!.pod, colour), outcome?.fit))
        writeLine(streams.stdout, line);
  }
  if (count === 0)
    throw new MalformedInputError(
      `${paths.join(', ')} holds no Pod, workload manifest, List or AdmissionReview to explain${notes.found()}`,
    );
  printer?.end();
  if (table && seen.fit) writeLine(streams.stdout, `\n${fitCaveatLine()}`);
  if (seen.rejected) return EXIT.usage;
  return seen.findings ? EXIT.findings : EXIT.ok;
}

/** `podmutation explain`. */
export function registerExplain(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'explain', {
    summary: 'which rules match each Pod of a Pod, AdmissionReview or workload manifest, and what they change',
    description:
      "For each Pod of the input: a Pod; an AdmissionReview (its request.object, in the request's namespace); a workload " +
      'manifest (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Argo Rollout: the Pod its controller would ' +
      "create from the template, in the manifest's namespace or --namespace); a List or YAML stream of them, as kubectl get " +
      '-o yaml or helm template print them, whose other documents (Services, ConfigMaps) are skipped with a note on stderr; ' +
      "several files, and folders (their .yaml, .yml and .json files, as a rules path's). A document with no kind is a Pod " +
      'only with spec.containers; others (a Helm values file, {}) are skipped with a note, and inputs that hold no Pod exit 2 ' +
      'naming what they hold. JSON is read as it arrives and each Pod printed as it is explained, so a List of a whole ' +
      "cluster's Pods is never held in memory. " +
      'Prints the rules that matched, the first dimension that failed for each that did not, the change to the scheduling ' +
      'fields, warnings or the denial. A Pod the input contract rejects is reported in its place and the others are still explained. ' +
      'Each Pod the rules changed says where it can run before and after them (with --capacity; without it only a Pod ' +
      'whose constraints contradict each other is judged), as admission judges it: the NodePools and Nodes it fits, or ' +
      'why it fits nowhere with the closest candidates and their reasons. Rules annotated if-unschedulable: skip are held ' +
      'back from a Pod they would strand, as admission holds them.',
    examples: [
      'podmutation explain --rules examples/rules test/fixtures/pods/pod-list.json',
      'podmutation explain --rules examples/rules -o json deployment.yaml',
      'podmutation explain --rules rules/ manifests/ extra-pod.yaml',
      'kubectl get pods -A -o json | podmutation explain --rules rules/ -o json -',
      'podmutation explain --rules rules/ --capacity nodes-and-nodepools.yaml deployment.yaml',
      'helm template ./chart | podmutation explain --rules rules/ -n shop -',
    ],
    exits: {
      0: 'every Pod explained, none denied',
      1: 'some Pod would be denied, the rules turned some Pod that fit somewhere into one that fits nowhere, or some rule or PodPlacement is invalid (skipped)',
      2: 'usage error, unreadable rules or input, inputs that hold no Pod, workload manifest, List or AdmissionReview, or a Pod the input contract rejects',
    },
  });
  command
    .argument(
      '[inputs...]',
      'Pod, AdmissionReview or workload manifest files (or Lists or YAML streams of them), folders of them, or - for standard input (the default when input is piped)',
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
  onRun<ExplainFlags, [string[]]>(command, (flags, [inputs]) => explain(flags, inputs, context));
}
