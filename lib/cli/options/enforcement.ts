/** The `--enforcement enforce|audit` option of serve, review, explain, report and test (the deployment's switch), and how audited matches read. */
import { Option } from 'commander';
import { DEFAULT_ENFORCEMENT, ENFORCEMENTS, isEnforcement, type Enforcement } from '../../api/index.ts';
import type { AuditedMatch } from '../../engine/index.ts';
import { MalformedInputError } from '../../errors/index.ts';
import { previewInput } from '../../json/index.ts';

/** `--enforcement MODE`, enforce by default as the stack parameter. */
export function enforcementOption(): Option {
  return new Option(
    '--enforcement <mode>',
    "enforce applies matched rules; audit only records them (the deployment's switch)",
  )
    .choices(ENFORCEMENTS)
    .default(DEFAULT_ENFORCEMENT);
}

/** The checked value of `--enforcement` (commander checked the choice; this narrows the type). */
export function enforcementOf(value: string | undefined): Enforcement {
  const given = value ?? DEFAULT_ENFORCEMENT;
  if (!isEnforcement(given))
    throw new MalformedInputError(`--enforcement must be ${ENFORCEMENTS.join(' or ')} (got ${previewInput(given)})`);
  return given;
}

/** One line per audited rule that matched: what enforcing it would change, or the denial it would cause. */
export function auditedLines(matches: readonly AuditedMatch[]): string[] {
  return matches.map((match) => {
    if (match.denial !== undefined) return `audited ${match.name}: enforcing it would deny the Pod: ${match.denial}`;
    if (match.operations === 0) return `audited ${match.name}: matched; enforcing it would change nothing`;
    return `audited ${match.name}: matched; enforcing it would change ${match.fields.join(', ')} (${match.operations} patch operation${match.operations === 1 ? '' : 's'})`;
  });
}
