/** The `--enforcement enforce|audit` option of serve, review, explain and report (the deployment's switch, issue #12), and how audited matches read. */
import { ENFORCEMENTS, isEnforcement, type Enforcement } from '../../api/index.ts';
import type { AuditedMatch } from '../../engine/index.ts';
import { MalformedInputError } from '../../errors/index.ts';
import { previewInput } from '../../values/index.ts';

/** The option's parseArgs definition; enforce is the default, as the stack parameter's. */
export const ENFORCEMENT_OPTIONS = {
  enforcement: { type: 'string', default: 'enforce' },
} as const;

/** The checked value of `--enforcement`; anything but enforce or audit is a usage error. */
export function enforcementOption(value: string | undefined): Enforcement {
  const given = value ?? 'enforce';
  if (!isEnforcement(given)) throw new MalformedInputError(`--enforcement must be ${ENFORCEMENTS.join(' or ')} (got ${previewInput(given)})`);
  return given;
}

/** One line per audited rule that matched: what enforcing it would change, or the denial it would cause. */
export function auditedLines(matches: readonly AuditedMatch[]): string[] {
  return matches.map((match) => {
    if (match.denial !== undefined) return `audited ${match.name}: enforcing it would deny the Pod: ${match.denial}`;
    if (match.operations === 0) return `audited ${match.name}: matched; enforcing it would change nothing`;
    return `audited ${match.name}: matched; enforcing it would change ${match.fields.join(', ')} (${match.operations} patch operations)`;
  });
}
