import type { Command } from 'commander';
import { describeIssues, ruleWarnings } from '../api/index.ts';
import { loadRuleFiles } from '../rule-files/index.ts';
import { defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import { writeLine } from './io.ts';
import { outputOption, printDocument, type OutputFormat } from './output.ts';

type Issues = readonly { readonly field: string; readonly reason: string }[];

/** One rule of `validate -o json|yaml`: the documented, stable shape (README.md, "The CLI"). */
type ValidatedRule =
  | { readonly name: string; readonly source: string; readonly valid: true; readonly enabled: boolean; readonly priority: number; readonly enforcement: string; readonly warnings: Issues }
  | { readonly name: string; readonly source: string; readonly valid: false; readonly issues: Issues };

/** Reports every rule of the paths as valid (with what it likely does not mean, as warnings) or invalid (field path and reason). */
async function validate(paths: readonly string[], output: OutputFormat, { streams }: CliContext): Promise<number> {
  const { loaded } = await loadRuleFiles(paths);
  const rules: ValidatedRule[] = loaded.map(({ source, verdict }) =>
    verdict.valid
      ? { name: verdict.rule.name, source, valid: true, enabled: verdict.rule.enable, priority: verdict.rule.priority, enforcement: verdict.rule.enforcement, warnings: ruleWarnings(verdict.rule) }
      : { name: verdict.invalid.name, source, valid: false, issues: verdict.invalid.issues.map(({ field, reason }) => ({ field, reason })) },
  );
  const invalid = rules.filter((rule) => !rule.valid).length;
  const warnings = rules.reduce((total, rule) => total + (rule.valid ? rule.warnings.length : 0), 0);
  if (output !== 'table') printDocument(streams.stdout, output, { rules, valid: rules.length - invalid, invalid });
  else {
    for (const rule of rules) {
      if (rule.valid) {
        writeLine(streams.stdout, `valid    ${rule.name} (${rule.source}; ${rule.enabled ? 'enabled' : 'disabled'}, priority ${rule.priority})`);
        for (const line of describeIssues({ name: rule.name, issues: rule.warnings })) writeLine(streams.stdout, `  warning: ${line}`);
        continue;
      }
      writeLine(streams.stdout, `invalid  ${rule.name} (${rule.source})`);
      for (const line of describeIssues(rule)) writeLine(streams.stdout, `  ${line}`);
    }
    writeLine(streams.stdout, `${rules.length - invalid} valid, ${invalid} invalid${warnings === 0 ? '' : `, ${warnings} warning${warnings === 1 ? '' : 's'}`}`);
  }
  return invalid === 0 ? EXIT.ok : EXIT.findings;
}

/** `podmutation validate`. */
export function registerValidate(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'validate', {
    summary: 'check PodMutation files as the sync checks the cluster\'s: every rule valid, or invalid with field path and reason',
    examples: ['podmutation validate examples/rules', 'podmutation validate rules/ -o json'],
    exits: { 0: 'every rule valid, with warnings or not', 1: 'some rule invalid', 2: 'usage error, or a path that cannot be read or parsed' },
  });
  command.argument('<paths...>', 'PodMutation files (YAML or JSON, multi-document) or folders of them').addOption(outputOption());
  onRun<{ output: OutputFormat }, [string[]]>(command, ({ output }, [paths]) => validate(paths, output, context));
}
