import { parseArgs } from 'node:util';
import { compileRuleSet, describeMismatch, mutatePod, type MutationOutcome } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import type { Pod } from '../engine/index.ts';
import { parseResourceDocuments } from '../rule-files/index.ts';
import { podInputs } from './inputs.ts';
import { colourWanted, schedulingDiff } from './diff.ts';
import { readInput, writeLine, type CliStreams } from './io.ts';
import { auditedLines, ENFORCEMENT_OPTIONS, enforcementOption } from './options/enforcement.ts';
import { PLACEMENT_OPTIONS, placementSteps } from './options/placement-file.ts';
import { loadRulesReportingInvalid } from './review.ts';

function describeOutcome(pod: Pod, outcome: MutationOutcome, colour: boolean): string[] {
  const { workload } = outcome;
  const lines = [`Pod ${workload.namespace}/${outcome.facts.displayName || '(unnamed)'} (workload ${workload.kind} ${workload.name})`];
  if (outcome.skipReason !== undefined) return [...lines, `  skipped: ${outcome.skipReason}`];
  const auditedNames = new Set(outcome.audited.map((match) => match.name));
  const matched = outcome.evaluations.filter((item) => item.outcome === 'matched' && !auditedNames.has(item.rule.name));
  const missed = outcome.evaluations.filter((item) => item.outcome === 'not-matched');
  const disabled = outcome.evaluations.filter((item) => item.outcome === 'disabled');
  lines.push(matched.length === 0 ? '  matched: none' : '  matched, in application order:');
  for (const item of matched) lines.push(`    ${item.rule.name}`);
  // Audited rules are listed apart: they matched, and none of their changes is in the result below.
  for (const line of auditedLines(outcome.audited)) lines.push(`  ${line}`);
  if (missed.length > 0) lines.push('  not matched (first dimension that failed):');
  for (const item of missed) lines.push(`    ${item.rule.name}: ${item.failed}: ${describeMismatch(item.rule, outcome.facts, item.failed!)}`);
  if (disabled.length > 0) lines.push(`  disabled (spec.enable is not true): ${disabled.map((item) => item.rule.name).join(', ')}`);
  if (outcome.denial !== undefined) {
    lines.push(`  denied: ${outcome.denial.message}`);
    return lines;
  }
  lines.push(`  result: ${outcome.decision}${outcome.patch.length > 0 ? ` (${outcome.patch.length} patch operations)` : ''}`);
  if (outcome.patch.length > 0) {
    lines.push('  changes to the scheduling fields (- before, + after):');
    for (const line of schedulingDiff(pod, outcome.pod, colour)) lines.push(`    ${line}`);
  }
  for (const warning of outcome.warnings) lines.push(`  warning: ${warning}`);
  return lines;
}

/**
 * `podmutation explain --rules PATH... INPUT`: for each Pod of the input (a Pod, an AdmissionReview, a workload manifest,
 * or a List or YAML stream of them), which rules
 * matched, the first failing dimension of each that did not, and the resulting change.
 */
export async function explainCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { rules: { type: 'string', multiple: true }, namespace: { type: 'string', short: 'n' }, ...PLACEMENT_OPTIONS, ...ENFORCEMENT_OPTIONS },
    allowPositionals: true,
  });
  if (positionals.length > 1) throw new MalformedInputError('explain takes one INPUT file (or - for standard input)');
  const loaded = await loadRulesReportingInvalid(values.rules ?? [], streams);
  const ruleSet = compileRuleSet(loaded.rules);
  const managedSteps = await placementSteps(values, streams);
  const enforcement = enforcementOption(values.enforcement);
  const source = positionals[0] ?? '-';
  const fallbackNamespace = values.namespace || 'default';
  const { inputs, skipped } = podInputs(parseResourceDocuments(await readInput(source, streams), source), source, fallbackNamespace);
  for (const line of skipped) writeLine(streams.stderr, line);
  if (inputs.length === 0) throw new MalformedInputError(`${source}: no Pod found`);
  let rejected = 0;
  inputs.forEach(({ pod, namespace, uid: requestUid, origin: where }, index) => {
    if (index > 0) writeLine(streams.stdout, '');
    const uid = requestUid ?? pod.metadata?.uid;
    const context = { requestUid: typeof uid === 'string' ? uid : `explain-${index}` };
    // A Pod the boundary rejects is reported in its place; the other Pods are still explained.
    let outcome: MutationOutcome;
    try {
      outcome = mutatePod(pod, namespace, ruleSet, context, { explain: true, managedSteps, enforcement, source: where, fallbackNamespace });
    } catch (error) {
      if (!(error instanceof MalformedInputError)) throw error;
      rejected += 1;
      writeLine(streams.stdout, `Pod ${where}`);
      writeLine(streams.stdout, `  rejected: ${error.message}`);
      return;
    }
    for (const line of describeOutcome(pod, outcome, colourWanted(streams.stdout, process.env))) writeLine(streams.stdout, line);
  });
  return rejected === 0 ? 0 : 2;
}
