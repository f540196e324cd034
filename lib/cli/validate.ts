import { describeIssues } from '../api/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { loadRuleFiles } from '../rule-files/index.ts';
import { writeLine, type CliStreams } from './io.ts';

/**
 * `podmutation validate PATH...`: reports every rule as valid or invalid (field path and reason).
 * Exit 1 when any rule is invalid.
 */
export async function validateCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  if (args.length === 0) throw new MalformedInputError('validate needs at least one PATH (a PodMutation file or a directory)');
  const { loaded } = await loadRuleFiles(args);
  let invalid = 0;
  for (const { source, verdict } of loaded) {
    if (verdict.valid) {
      const state = verdict.rule.enable ? 'enabled' : 'disabled';
      writeLine(streams.stdout, `valid    ${verdict.rule.name} (${source}; ${state}, priority ${verdict.rule.priority})`);
      continue;
    }
    invalid += 1;
    writeLine(streams.stdout, `invalid  ${verdict.invalid.name} (${source})`);
    for (const line of describeIssues(verdict.invalid)) writeLine(streams.stdout, `  ${line}`);
  }
  writeLine(streams.stdout, `${loaded.length - invalid} valid, ${invalid} invalid`);
  return invalid === 0 ? 0 : 1;
}
