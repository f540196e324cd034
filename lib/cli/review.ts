import { Option, type Command } from 'commander';
import { answerAdmissionReview } from '../admission/index.ts';
import { compileRuleSet } from '../engine/index.ts';
import { MalformedInputError, PodMutationError } from '../errors/index.ts';
import { isJsonObject } from '../json/index.ts';
import { parseResourceDocuments, parseSingleDocument } from '../rule-files/index.ts';
import { KEYLESS_STAMPS } from '../stamp/index.ts';
import { podInputs, type PodInput } from '../workloads/index.ts';
import { defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import { readInput, writeLine } from './io.ts';
import { capacityOption, fitCaveatLine, fitShown, readCapacityFiles, type CapacityFlags } from './options/capacity.ts';
import { auditedLines, enforcementOf, enforcementOption } from './options/enforcement.ts';
import { placementOptions, placementSteps, type PlacementFlags } from './options/placement-file.ts';
import {
  allowEmptyOption,
  excludeOption,
  ruleLoadOptions,
  loadRulesReportingInvalid,
  someInvalid,
  rulesOption,
} from './options/rules.ts';

interface ReviewFlags extends PlacementFlags, CapacityFlags {
  readonly rules?: string[];
  readonly allowEmpty?: boolean;
  readonly exclude?: string[];
  readonly wrap?: boolean;
  readonly namespace?: string;
  readonly enforcement: string;
}

function isJsonObjectLine(line: string): boolean {
  if (!line.trimStart().startsWith('{')) return false;
  try {
    return isJsonObject(JSON.parse(line));
  } catch {
    return false;
  }
}

/**
 * NDJSON: at least two non-empty lines, the text is not one JSON document, and some line is a JSON object of its own.
 * Any line may then be malformed and is answered as such; a pretty-printed JSON or a YAML review is one document.
 */
function looksLikeNdjson(text: string): boolean {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines.length < 2) return false;
  try {
    JSON.parse(text);
    return false;
  } catch {
    return lines.some(isJsonObjectLine);
  }
}

/** The answer to a line that could not be reviewed: the HTTP 400 body's shape, plus the line number. */
function lineErrorAnswer(line: number, error: unknown): { readonly answer: string; readonly message: string } {
  // Nothing but typed errors leaves the engine; anything else is a bug, still answered without a stack trace.
  const typed = error instanceof PodMutationError;
  const name = typed ? error.name : 'InternalError';
  const message = typed ? error.message : `the review could not be evaluated (${(error as Error)?.name ?? 'error'})`;
  return { answer: JSON.stringify({ error: name, message, line }), message };
}

/** The AdmissionReview the API server sends for the CREATE of an input's Pod (`review --wrap`). */
function wrappedReview(input: PodInput, index: number, fallbackNamespace: string) {
  const podNamespace = input.pod.metadata?.namespace;
  const namespace =
    input.namespace || (typeof podNamespace === 'string' && podNamespace !== '' ? podNamespace : fallbackNamespace);
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: input.uid ?? `podmutation-review-${index + 1}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation: 'CREATE',
      namespace,
      object: input.pod,
    },
  };
}

/** The one review of the input; several documents are a usage error that points at --wrap. */
function singleReview(text: string, input: string): unknown {
  try {
    return parseSingleDocument(text, input);
  } catch (error) {
    if (!(error instanceof MalformedInputError) || error.context['documents'] === undefined) throw error;
    throw new MalformedInputError(
      `${error.message}; review answers one AdmissionReview (or NDJSON, one review per line), and --wrap answers each Pod or workload of several documents as the CREATE the API server would send`,
      { cause: error },
    );
  }
}

/**
 * Answers one AdmissionReview (JSON or YAML) or NDJSON (one review per line, each answered on its own line) exactly as
 * the Lambda does. With `--wrap`, the input is what explain takes, each Pod answered as a Pod CREATE on its own line.
 */
async function review(flags: ReviewFlags, given: string | undefined, { streams }: CliContext): Promise<number> {
  const input = given ?? '-';
  if (flags.namespace !== undefined && flags.wrap !== true)
    throw new MalformedInputError('--namespace goes with --wrap: a review names its own namespace');
  const loaded = await loadRulesReportingInvalid(flags.rules, streams, ruleLoadOptions(flags));
  const ruleSet = compileRuleSet(loaded.rules);
  // Without --capacity, judged as the webhook judges without a published capacity: contradictions only.
  const capacity = await readCapacityFiles(flags.capacity ?? [], streams);
  // Stamped as the webhook stamps, but without the stack's key: no MAC is written, and a stamp is checked by its sum.
  const options = {
    managedSteps: await placementSteps(flags, streams, loaded.placements.placements),
    enforcement: enforcementOf(flags.enforcement),
    stamps: KEYLESS_STAMPS,
    capacity,
  };
  const text = await readInput(given, streams);
  let denied = 0;
  let stranded = 0;
  let judged = 0;
  // stdout carries the responses exactly as the webhook sends them; what audited rules would change, and where a changed
  // Pod can run, go to stderr.
  const answer = (body: string, where: string): string => {
    const answered = answerAdmissionReview(body, ruleSet, options);
    const outcome = answered.verdict.outcome;
    if (outcome?.denial !== undefined) denied += 1;
    for (const line of auditedLines(outcome?.audited ?? [])) writeLine(streams.stderr, `${where}: ${line}`);
    const fit = outcome?.fit;
    if (fitShown(fit, capacity.known)) {
      const { before, after, stranded: strands } = fit;
      judged += 1;
      if (strands) stranded += 1;
      const label = strands ? 'unschedulable: the rules stranded the Pod' : 'where it can run';
      writeLine(streams.stderr, `${where}: ${label}: before ${before.text()}; after ${after.text()}`);
    }
    return answered.body;
  };
  const findings = (): number => {
    if (judged > 0) writeLine(streams.stderr, fitCaveatLine());
    return denied > 0 || stranded > 0 || someInvalid(loaded) ? EXIT.findings : EXIT.ok;
  };
  if (flags.wrap === true) {
    // Each Pod the input stands for is sent as the API server sends a Pod CREATE, and answered on its own line.
    const fallback = flags.namespace || 'default';
    const { inputs, skipped } = podInputs(parseResourceDocuments(text, input), input, fallback);
    for (const line of skipped) writeLine(streams.stderr, line);
    if (inputs.length === 0) throw new MalformedInputError(`${input}: no Pod found`);
    inputs.forEach((pod, index) =>
      writeLine(streams.stdout, answer(JSON.stringify(wrappedReview(pod, index, fallback)), pod.origin)),
    );
    return findings();
  }
  if (looksLikeNdjson(text)) {
    // Every line is answered, in order: a review, or an error answer naming the line; one bad line stops nothing.
    let failed = 0;
    text.split('\n').forEach((line, index) => {
      if (line.trim() === '') return;
      try {
        writeLine(streams.stdout, answer(line, `${input}:${index + 1}`));
      } catch (error) {
        failed += 1;
        const { answer: body, message } = lineErrorAnswer(index + 1, error);
        writeLine(streams.stdout, body);
        writeLine(streams.stderr, `${input}:${index + 1}: ${message}`);
      }
    });
    return failed === 0 ? findings() : EXIT.usage;
  }
  const document = singleReview(text, input);
  const kind = isJsonObject(document) && typeof document.kind === 'string' ? document.kind : undefined;
  if (kind !== undefined && kind !== 'AdmissionReview') {
    // A Pod or a manifest given where a review was expected: the one-flag fix is --wrap.
    throw new MalformedInputError(
      `${input}: a ${kind}, not an AdmissionReview; review answers AdmissionReviews, and --wrap answers a ${kind} as the CREATE the API server would send`,
    );
  }
  writeLine(streams.stdout, answer(JSON.stringify(document), input));
  return findings();
}

/** `podmutation review`. */
export function registerReview(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'review', {
    summary: 'answer AdmissionReviews as the webhook does, byte for byte',
    description:
      'Answers one AdmissionReview (JSON or YAML) or NDJSON (one review per line) on stdout, byte for byte what the Lambda ' +
      "returns but for the stamp's MAC: without the stack's key, stamps are written without one and checked by their sum. " +
      'In NDJSON every line is answered in order; a line that is not a review gets {"error","message","line"} on ' +
      'stdout and FILE:LINE: message on stderr. With --wrap the input is what explain takes (Pods, AdmissionReviews, ' +
      'workload manifests, Lists, YAML streams) and each Pod is answered as the CREATE the API server would send. Invalid ' +
      'rules are reported on stderr and skipped; what audited rules would change goes to stderr. With --capacity, the ' +
      'answers carry the warning the webhook gives when the rules strand a Pod (as with the capacity the sync ' +
      'publishes) and rules annotated if-unschedulable: skip are held back as there; stderr says where each changed Pod ' +
      'can run before and after the rules. Without it, as the webhook without a published capacity, only a Pod whose ' +
      'constraints contradict each other is judged.',
    examples: [
      'podmutation review --rules examples/rules test/fixtures/reviews/deployment-legacy-pool.json',
      'podmutation review --rules examples/rules - < reviews.ndjson',
      'podmutation review --rules examples/rules --wrap --namespace shop deployment.yaml',
    ],
    exits: {
      0: 'every input answered, none denied',
      1: 'some Pod denied, the rules turned some Pod that fit somewhere into one that fits nowhere, or some rule or PodPlacement invalid (skipped)',
      2: 'usage error, unreadable rules or input, or a malformed review (any line)',
    },
  });
  command
    .argument('[input]', 'AdmissionReview file, or - for standard input (the default when input is piped)')
    .addOption(rulesOption())
    .addOption(allowEmptyOption())
    .addOption(excludeOption())
    .option(
      '--wrap',
      'read Pods, AdmissionReviews and workload manifests, and answer each Pod as the Pod CREATE the API server would send',
    )
    .addOption(
      new Option(
        '-n, --namespace <namespace>',
        'with --wrap: the namespace of Pods and workloads that name none',
      ).default(undefined, 'default'),
    )
    .addOption(enforcementOption())
    .addOption(capacityOption('each changed Pod'));
  for (const option of placementOptions()) command.addOption(option);
  onRun<ReviewFlags, [string | undefined]>(command, (flags, [input]) => review(flags, input, context));
}
