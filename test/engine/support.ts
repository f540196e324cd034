import { compileRuleSet, podFacts, type RuleSet } from '../../lib/engine/index.ts';
import { rule } from '../support/builders.ts';
import { matchRule } from '../../lib/engine/match.ts';

/** A rule set of one rule with the given spec. */
export function rulesFor(spec: Record<string, unknown>): RuleSet {
  return compileRuleSet([rule('under-test', spec)]);
}

export { matchRule, podFacts };
