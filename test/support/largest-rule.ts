/**
 * The largest PodMutation the contract admits: every list at its bound, every string at its longest, and the
 * requirements and values of the per-rule budget spent in full. Tests prove both enforcement points accept it and that
 * it serializes within the byte budget; `npm run bench` fills the snapshot budget with it.
 */
import { LIMITS } from '../../lib/api/index.ts';
import { RULE_BUDGET } from '../../lib/api/constants.ts';

// A DNS-1123 subdomain of 253 characters, the longest prefix a qualified name may have.
const PREFIX = `${'p'.repeat(61)}.${'q'.repeat(61)}.${'r'.repeat(61)}.${'s'.repeat(61)}.xxxxx`;
const NAME_CHARS = 63;

/** A qualified name of the longest form (253-character prefix, "/", 63-character name), distinct by index. */
function longKey(index: number): string {
  const name = `k${index}`.padEnd(NAME_CHARS - 1, 'a');
  return `${PREFIX}/${name}z`;
}

/** A label value of 63 characters, distinct by index. */
function longValue(index: number): string {
  return `v${index}`.padEnd(NAME_CHARS - 1, 'b') + 'z';
}

function longDns1123Label(index: number): string {
  return `n${index}`.padEnd(62, 'c') + 'z';
}

function longDns1123Subdomain(index: number): string {
  return `${`w${index}`.padEnd(63, 'a')}.${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(61)}`;
}

function longKind(index: number): string {
  return `K${index}`.padEnd(62, 'x') + 'Z';
}

function map(count: number, value: (index: number) => string, offset = 0): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, index) => [longKey(offset + index), value(index)]));
}

function tolerations(offset: number): Record<string, unknown>[] {
  return Array.from({ length: LIMITS.configuredListItems }, (_, index) => ({
    key: longKey(offset + index),
    operator: 'Equal',
    value: longValue(index),
    effect: 'NoExecute',
    tolerationSeconds: Number.MAX_SAFE_INTEGER,
  }));
}

/**
 * The requirements budget spread over the four node affinity halves of the rule, one requirement per term (so terms
 * are as many as the lists allow), each requirement's values the same share of the values budget.
 */
function affinity(half: number, termsPerHalf: number, valuesPerRequirement: number) {
  const requirement = (term: number) => ({
    key: longKey(half * 1000 + term),
    operator: 'NotIn',
    values: Array.from({ length: valuesPerRequirement }, (_, index) => longValue(index)),
  });
  const terms = Array.from({ length: termsPerHalf }, (_, term) => ({ matchExpressions: [requirement(term)] }));
  return terms;
}

/** The largest rule the CRD and the validator admit, as a PodMutation resource; `name` is padded to 253 characters. */
export function largestRule(name = 'largest-allowed-rule'): Record<string, unknown> {
  const termsPerHalf = Math.min(LIMITS.configuredRequiredTerms, RULE_BUDGET.maxRequirements / 4);
  const valuesPerRequirement = Math.min(
    LIMITS.configuredValuesPerExpression,
    Math.floor(RULE_BUDGET.maxValues / (4 * termsPerHalf)),
  );
  const nodeAffinity = (first: number) => ({
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: affinity(first, termsPerHalf, valuesPerRequirement),
    },
    preferredDuringSchedulingIgnoredDuringExecution: affinity(first + 1, termsPerHalf, valuesPerRequirement).map(
      (preference, index) => ({
        weight: 100 - (index % 100),
        preference,
      }),
    ),
  });
  const keys = (offset: number) =>
    Array.from({ length: LIMITS.configuredListItems }, (_, index) => longKey(offset + index));
  return {
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodMutation',
    metadata: { name: `${name}.${'m'.repeat(252 - name.length)}`, generation: Number.MAX_SAFE_INTEGER },
    spec: {
      enable: true,
      priority: -2147483648,
      workloadSelector: {
        namespaces: Array.from({ length: LIMITS.selectorNames }, (_, index) => longDns1123Label(index)),
        kinds: Array.from({ length: LIMITS.selectorNames }, (_, index) => longKind(index)),
        names: Array.from({ length: LIMITS.selectorNames }, (_, index) => longDns1123Subdomain(index)),
        labelSelector: { matchLabels: map(LIMITS.configuredListItems, longValue) },
        nodeAffinityMatch: nodeAffinity(0),
        nodeSelectorMatch: map(LIMITS.configuredListItems, longValue, 5000),
        tolerationsMatch: tolerations(6000),
      },
      mutationRemove: {
        nodeAffinity: { keys: keys(7000) },
        nodeSelector: { keys: keys(8000) },
        tolerations: { keys: keys(9000) },
      },
      mutationAdd: {
        annotations: map(
          LIMITS.configuredListItems,
          (index) => `a${index}`.padEnd(LIMITS.annotationValueChars, 'h'),
          10_000,
        ),
        nodeSelector: map(LIMITS.configuredListItems, longValue, 11_000),
        tolerations: tolerations(12_000),
        nodeAffinity: nodeAffinity(2),
      },
    },
  };
}
