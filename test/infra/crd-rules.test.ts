/**
 * One message per named rule: every CEL rule of infra/crd.yaml is a named rule of lib/api/rules.ts with that rule's
 * message, and wherever the CRD rejects a corpus file with a CEL rule, the validator reports the same message.
 */
import { describe, expect, it } from 'vitest';
import { validatePodMutation } from '../../lib/api/index.ts';
import { CEL_RULES } from '../../lib/api/crd-rules.ts';
import { RULES, type RuleName } from '../../lib/api/rules.ts';
import { loadCorpus, loadCrd } from './corpus.ts';
import { createCrdAdmission, type SchemaNode } from './structural-schema.ts';

const crd = loadCrd();
const admit = createCrdAdmission(crd);
const NAMES = Object.keys(RULES) as RuleName[];

function validationsOf(node: SchemaNode): { rule: string; message?: string }[] {
  return [
    ...(node['x-kubernetes-validations'] ?? []),
    ...Object.values(node.properties ?? {}).flatMap(validationsOf),
    ...(node.items === undefined ? [] : validationsOf(node.items)),
    ...(node.additionalProperties === undefined ? [] : validationsOf(node.additionalProperties)),
  ];
}

/** The named rule a CEL rule of the CRD is, by its expression and message; undefined for one of neither. */
function namedRule(validation: { rule: string; message?: string }): RuleName | undefined {
  return NAMES.find((name) => CEL_RULES[name] === validation.rule && RULES[name] === validation.message);
}

/** Whether a validator reason says a rule's message: the message itself, or followed by what was got. */
function saysMessage(reason: string, message: string): boolean {
  return reason === message || (reason.startsWith(`${message} (got `) && reason.endsWith(')'));
}

const validations = [crd, loadCrd('podplacement-crd.yaml')].flatMap((each) =>
  validationsOf(each.spec.versions[0]!.schema.openAPIV3Schema),
);

describe('the CEL rules of infra/crd.yaml and infra/podplacement-crd.yaml', () => {
  it('are each a named rule of lib/api/rules.ts, with its expression and its one message', () => {
    const unnamed = validations.filter((validation) => namedRule(validation) === undefined);
    expect(unnamed).toEqual([]);
  });

  it('use every named rule', () => {
    const used = new Set(validations.map(namedRule));
    expect(NAMES.filter((name) => !used.has(name))).toEqual([]);
  });
});

describe('the CRD and the validator on the invalid corpus', () => {
  const invalid = loadCorpus('invalid');

  it.each(invalid.map((entry) => [entry.file, entry] as const))(
    '%s: each CEL rejection is reported by the validator with the same message',
    (_file, entry) => {
      const celMessages = admit(entry.resource).errors.flatMap(({ rule, message }) =>
        rule === undefined ? [] : [message],
      );
      const verdict = validatePodMutation(entry.resource);
      const reasons = verdict.valid ? [] : verdict.invalid.issues.map(({ reason }) => reason);
      const unmatched = celMessages.filter((message) => !reasons.some((reason) => saysMessage(reason, message)));
      expect(unmatched, `validator: ${reasons.join('; ')}`).toEqual([]);
    },
  );
});

describe('the message comparison itself', () => {
  it('accepts the message alone or followed by what was got', () => {
    const message = RULES['selector-all-alone'];
    expect([saysMessage(message, message), saysMessage(`${message} (got namespaces)`, message)]).toEqual([true, true]);
  });

  it('rejects a reason worded differently from the CEL message', () => {
    expect(
      saysMessage('an empty key requires operator Exists', 'a toleration with an empty key must use operator Exists'),
    ).toBe(false);
  });

  it('rejects a CEL rule whose message is not its named rule', () => {
    const rule = CEL_RULES['toleration-empty-key-exists'];
    expect(namedRule({ rule, message: 'an empty key requires operator Exists' })).toBeUndefined();
  });
});
