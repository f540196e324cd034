import { parseArgs } from 'node:util';
import { answerAdmissionReview } from '../admission/index.ts';
import { describeIssues } from '../api/index.ts';
import { compileRuleSet } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { loadRuleFiles, type LoadedRules } from '../rules/index.ts';
import { parseSingleDocument, readInput, writeLine, type CliStreams } from './io.ts';
import { PLACEMENT_OPTIONS, placementSteps } from './placements.ts';

/** Loads rules for a command, reporting each invalid rule on stderr (they are skipped). */
export async function loadRulesReportingInvalid(paths: readonly string[], streams: CliStreams): Promise<LoadedRules> {
  if (paths.length === 0) throw new MalformedInputError('at least one --rules PATH is required');
  const loaded = await loadRuleFiles(paths);
  for (const invalid of loaded.invalid) {
    for (const line of describeIssues(invalid)) writeLine(streams.stderr, `invalid rule skipped: ${line}`);
  }
  return loaded;
}

function looksLikeNdjson(text: string): boolean {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines.length < 2) return false;
  try {
    JSON.parse(lines[0]!);
    return true;
  } catch {
    return false;
  }
}

/**
 * `podmutation review --rules PATH... [FILE|-]`: answers one AdmissionReview (JSON or YAML) or
 * NDJSON (one review per line) exactly as the Lambda does. Exit 0 when every input was answered,
 * 2 for malformed input.
 */
export async function reviewCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { rules: { type: 'string', multiple: true }, ...PLACEMENT_OPTIONS },
    allowPositionals: true,
  });
  if (positionals.length > 1) throw new MalformedInputError('review takes at most one input FILE (or - for standard input)');
  const loaded = await loadRulesReportingInvalid(values.rules ?? [], streams);
  const ruleSet = compileRuleSet(loaded.rules);
  const managedSteps = await placementSteps(values, streams);
  const source = positionals[0] ?? '-';
  const text = await readInput(source, streams);
  if (looksLikeNdjson(text)) {
    let malformed = 0;
    text.split('\n').forEach((line, index) => {
      if (line.trim() === '') return;
      try {
        writeLine(streams.stdout, answerAdmissionReview(line, ruleSet, managedSteps).body);
      } catch (error) {
        if (!(error instanceof MalformedInputError)) throw error;
        malformed += 1;
        writeLine(streams.stderr, `${source}:${index + 1}: ${error.message}`);
      }
    });
    return malformed === 0 ? 0 : 2;
  }
  const review = parseSingleDocument(text, source);
  writeLine(streams.stdout, answerAdmissionReview(JSON.stringify(review), ruleSet, managedSteps).body);
  return 0;
}
