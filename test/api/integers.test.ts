/**
 * Integers as the CRD declares them: tolerationSeconds is int64, so every integer from -2^63 to 2^63-1 is valid and
 * kept with its digits from the rule file (YAML or JSON) through the normalized rule to the patch the engine writes;
 * beyond int64, and beyond the narrower range of priority (int32) and weight (1 to 100), the validator names the field
 * and the range.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validatePodMutation, type NormalizedRule } from '../../lib/api/index.ts';
import { compileRuleSet, reviewPod } from '../../lib/engine/index.ts';
import { parseSingleDocument } from '../../lib/rule-files/index.ts';
import { canonicalJson } from '../../lib/json/index.ts';
import { pod } from '../support/builders.ts';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const RANGE = 'must be an integer from -9223372036854775808 to 9223372036854775807';

/** A PodMutation's text in YAML or JSON with `field: <digits>` written at `where`, exactly as a user writes it. */
function ruleText(
  format: 'yaml' | 'json',
  where: 'toleration' | 'tolerationsMatch' | 'priority' | 'weight',
  digits: string,
) {
  const toleration = `{"key": "example.com/drain", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": ${digits}}`;
  const spec = {
    toleration: `"workloadSelector": {"all": true}, "mutationAdd": {"tolerations": [${toleration}]}`,
    tolerationsMatch: `"workloadSelector": {"tolerationsMatch": [${toleration}]}, "mutationAdd": {"annotations": {"example.com/a": "b"}}`,
    priority: `"priority": ${digits}, "workloadSelector": {"all": true}, "mutationAdd": {"annotations": {"example.com/a": "b"}}`,
    weight: `"workloadSelector": {"all": true}, "mutationAdd": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": ${digits}, "preference": {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["arm64"]}]}}]}}`,
  }[where];
  const json = `{"apiVersion": "agent.cloudpilot.ai/v1alpha1", "kind": "PodMutation", "metadata": {"name": "under-test"}, "spec": {"enable": true, ${spec}}}`;
  // JSON is YAML's flow style: a comment line makes the text YAML, which the JSON parser refuses.
  return format === 'json' ? json : `# under-test\n${json}`;
}

function verdictOf(format: 'yaml' | 'json', where: Parameters<typeof ruleText>[1], digits: string) {
  return validatePodMutation(parseSingleDocument(ruleText(format, where, digits), `under-test.${format}`));
}

function validRule(format: 'yaml' | 'json', where: Parameters<typeof ruleText>[1], digits: string): NormalizedRule {
  const verdict = verdictOf(format, where, digits);
  if (!verdict.valid) throw new Error(`expected valid: ${JSON.stringify(verdict.invalid.issues)}`);
  return verdict.rule;
}

function issuesOf(format: 'yaml' | 'json', where: Parameters<typeof ruleText>[1], digits: string) {
  const verdict = verdictOf(format, where, digits);
  return verdict.valid ? [] : verdict.invalid.issues;
}

describe.each(['yaml', 'json'] as const)('tolerationSeconds in a %s rule file', (format) => {
  it.each(['9007199254740993', '9223372036854775807', '-9223372036854775808', '300', '0'])(
    'accepts %s and keeps its digits in the normalized rule',
    (digits) => {
      const rule = validRule(format, 'toleration', digits);
      expect(canonicalJson(rule.mutationAdd.tolerations)).toContain(`"tolerationSeconds":${digits}`);
    },
  );

  it.each(['9223372036854775808', '-9223372036854775809', '99999999999999999999999'])(
    'rejects %s, beyond int64, with the field path and the range',
    (digits) => {
      expect(issuesOf(format, 'toleration', digits)).toEqual([
        { field: 'spec.mutationAdd.tolerations[0].tolerationSeconds', reason: `${RANGE} (got ${digits})` },
      ]);
    },
  );

  it('takes every int64 (a law over the whole range) and refuses every integer beyond it', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), (value) => {
        const rule = validRule(format, 'toleration', value.toString());
        return canonicalJson(rule.mutationAdd.tolerations).includes(`"tolerationSeconds":${value}`);
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.bigInt({ min: INT64_MAX + 1n, max: 2n ** 80n }),
          fc.bigInt({ min: -(2n ** 80n), max: INT64_MIN - 1n }),
        ),
        (value) => issuesOf(format, 'toleration', value.toString()).some((issue) => issue.reason.startsWith(RANGE)),
      ),
      { numRuns: 100 },
    );
  });
});

describe('the other integer fields of the schema, given more than a double holds', () => {
  it.each([
    {
      where: 'tolerationsMatch' as const,
      digits: '9223372036854775807',
      issues: [],
    },
    {
      where: 'priority' as const,
      digits: '9007199254740993',
      issues: [{ field: 'spec.priority', reason: 'must be a 32-bit integer (got 9007199254740993)' }],
    },
    {
      where: 'weight' as const,
      digits: '9007199254740993',
      issues: [
        {
          field: 'spec.mutationAdd.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight',
          reason: 'must be an integer from 1 to 100 (got 9007199254740993)',
        },
      ],
    },
  ])('$where $digits: $issues.length issue(s)', ({ where, digits, issues }) => {
    expect(issuesOf('yaml', where, digits)).toEqual(issues);
  });
});

describe('the digits through to what the engine writes', () => {
  it("adds a rule's toleration of int64's maximum to the patch with every digit", () => {
    const rule = validRule('yaml', 'toleration', '9223372036854775807');

    const { patch } = reviewPod({
      pod: pod(),
      namespace: 'production',
      ruleSet: compileRuleSet([rule]),
      context: { requestUid: 'uid-1' },
    });

    expect(JSON.stringify(patch)).toContain('"tolerationSeconds":9223372036854775807');
  });

  it('matches a tolerationsMatch entry beyond 2^53 to a Pod toleration of the same digits, and to no other', () => {
    const rule = validRule('json', 'tolerationsMatch', '9223372036854775807');
    const ruleSet = compileRuleSet([rule]);
    const tolerating = (digits: string) =>
      parseSingleDocument(
        JSON.stringify(pod()).replace(
          '"spec":{',
          `"spec":{"tolerations":[{"key":"example.com/drain","operator":"Exists","effect":"NoExecute","tolerationSeconds":${digits}}],`,
        ),
        'pod.json',
      ) as ReturnType<typeof pod>;

    const same = reviewPod({
      pod: tolerating('9223372036854775807'),
      namespace: 'production',
      ruleSet,
      context: { requestUid: 'uid-1' },
    });
    const other = reviewPod({
      pod: tolerating('9223372036854775806'),
      namespace: 'production',
      ruleSet,
      context: { requestUid: 'uid-1' },
    });

    expect(same.applied).toEqual(['under-test']);
    expect(other.applied).toEqual([]);
  });
});
