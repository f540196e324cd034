import { parseArgs } from 'node:util';
import { answerAdmissionReview } from '../admission/index.ts';
import { describeIssues } from '../api/index.ts';
import { compileRuleSet } from '../engine/index.ts';
import { MalformedInputError, PodMutationError } from '../errors/index.ts';
import { isJsonObject } from '../values/index.ts';
import { loadRuleFiles, parseResourceDocuments, type LoadedRules } from '../rule-files/index.ts';
import { parseSingleDocument, readInput, writeLine, type CliStreams } from './io.ts';
import { podInputs, type PodInput } from './inputs.ts';
import { auditedLines, ENFORCEMENT_OPTIONS, enforcementOption } from './options/enforcement.ts';
import { PLACEMENT_OPTIONS, placementSteps } from './options/placement-file.ts';

/** Loads rules for a command, reporting each invalid rule on stderr (they are skipped). */
export async function loadRulesReportingInvalid(paths: readonly string[], streams: CliStreams): Promise<LoadedRules> {
  if (paths.length === 0) throw new MalformedInputError('at least one --rules PATH is required');
  const loaded = await loadRuleFiles(paths);
  for (const invalid of loaded.invalid) {
    for (const line of describeIssues(invalid)) writeLine(streams.stderr, `invalid rule skipped: ${line}`);
  }
  return loaded;
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
  const namespace = input.namespace || (typeof podNamespace === 'string' && podNamespace !== '' ? podNamespace : fallbackNamespace);
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

/**
 * `podmutation review --rules PATH... [FILE|-]`: answers one AdmissionReview (JSON or YAML) or
 * NDJSON (one review per line, each answered on its own line) exactly as the Lambda does. Exit 0 when every
 * input was answered, 2 when any input (any line) was malformed. With `--wrap`, the input is what explain takes (Pods,
 * AdmissionReviews, workload manifests, Lists and YAML streams), each Pod answered as a Pod CREATE on its own line.
 */
export async function reviewCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      rules: { type: 'string', multiple: true },
      wrap: { type: 'boolean', default: false },
      namespace: { type: 'string', short: 'n' },
      ...PLACEMENT_OPTIONS,
      ...ENFORCEMENT_OPTIONS,
    },
    allowPositionals: true,
  });
  if (positionals.length > 1) throw new MalformedInputError('review takes at most one input FILE (or - for standard input)');
  if (values.namespace !== undefined && !values.wrap) throw new MalformedInputError('--namespace goes with --wrap: a review names its own namespace');
  const loaded = await loadRulesReportingInvalid(values.rules ?? [], streams);
  const ruleSet = compileRuleSet(loaded.rules);
  const options = { managedSteps: await placementSteps(values, streams), enforcement: enforcementOption(values.enforcement) };
  const source = positionals[0] ?? '-';
  const text = await readInput(source, streams);
  // stdout carries the responses exactly as the webhook sends them; what audited rules would change goes to stderr.
  const answer = (body: string, where: string): string => {
    const answered = answerAdmissionReview(body, ruleSet, options);
    for (const line of auditedLines(answered.verdict.outcome?.audited ?? [])) writeLine(streams.stderr, `${where}: ${line}`);
    return answered.body;
  };
  if (values.wrap) {
    // Each Pod the input stands for is sent as the API server sends a Pod CREATE, and answered on its own line.
    const { inputs, skipped } = podInputs(parseResourceDocuments(text, source), source, values.namespace || 'default');
    for (const line of skipped) writeLine(streams.stderr, line);
    if (inputs.length === 0) throw new MalformedInputError(`${source}: no Pod found`);
    inputs.forEach((input, index) => writeLine(streams.stdout, answer(JSON.stringify(wrappedReview(input, index, values.namespace || 'default')), input.origin)));
    return 0;
  }
  if (looksLikeNdjson(text)) {
    // Every line is answered, in order: a review, or an error answer naming the line; one bad line stops nothing.
    let failed = 0;
    text.split('\n').forEach((line, index) => {
      if (line.trim() === '') return;
      try {
        writeLine(streams.stdout, answer(line, `${source}:${index + 1}`));
      } catch (error) {
        failed += 1;
        const { answer, message } = lineErrorAnswer(index + 1, error);
        writeLine(streams.stdout, answer);
        writeLine(streams.stderr, `${source}:${index + 1}: ${message}`);
      }
    });
    return failed === 0 ? 0 : 2;
  }
  const review = parseSingleDocument(text, source);
  writeLine(streams.stdout, answer(JSON.stringify(review), source));
  return 0;
}
