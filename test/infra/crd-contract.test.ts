/**
 * One contract, two enforcement points: the API server (infra/crd.yaml, emulated with its schema
 * and CEL rules) and the project's validator must give the same verdict on every corpus file,
 * except for the table of checks Kubernetes cannot express below.
 */
import { describe, expect, it } from 'vitest';
import { validatePodMutation } from '../../lib/api/index.ts';
import type { Issue } from '../../lib/json/index.ts';
import { loadCorpus, loadCrd, type CorpusEntry } from './corpus.ts';
import { createCrdAdmission, type SchemaNode } from './structural-schema.ts';

const crd = loadCrd();
const admit = createCrdAdmission(crd);
const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;

function validatorIssues(entry: CorpusEntry): readonly Issue[] {
  const verdict = validatePodMutation(entry.resource);
  return verdict.valid ? [] : verdict.invalid.issues;
}

function allRules(node: SchemaNode): string[] {
  return [
    ...(node['x-kubernetes-validations'] ?? []).map(({ rule }) => rule),
    ...Object.values(node.properties ?? {}).flatMap(allRules),
    ...(node.items === undefined ? [] : allRules(node.items)),
    ...(node.additionalProperties === undefined ? [] : allRules(node.additionalProperties)),
  ];
}

/**
 * Checks Kubernetes cannot express in a CRD schema: the API server accepts these resources, the
 * validator rejects them, and the sync reports them as Accepted=False. Names are not in this table:
 * the API server keys resources by name, so a cluster never holds two rules of one name (files
 * given to the CLI are checked for duplicates by the rule loader, not by validatePodMutation).
 */
const NOT_EXPRESSIBLE: Readonly<Record<string, string>> = {
  'misspelt-field.yaml':
    'unknown fields under spec are kept (x-kubernetes-preserve-unknown-fields) rather than pruned, but a kept field is not visible to CEL, so only the validator can name it; the sync then reports Accepted=False and the rule is never applied',
  'misspelt-field-in-a-toleration.yaml': 'a kept unknown field in a list entry is not visible to CEL either (as above)',
  'match-fields-null.yaml':
    'a null in a non-nullable field is dropped during decoding, so the rule forbidding matchFields never sees it',
  'invalid-node-selector-key.yaml':
    'structural schemas cannot constrain map keys; a CEL rule over the keys could (the API server costs map keys as empty strings, so a per-key regular expression over this map of at most 64 entries fits the budget, and over an unbounded map does not: test/real-cluster/crd.test.ts), but the CRD leaves key syntax to the validator',
  'invalid-annotation-key.yaml':
    'structural schemas cannot constrain map keys, and the CRD has no CEL rule for them (as above)',
  'invalid-match-labels-key.yaml':
    'structural schemas cannot constrain map keys, and the CRD has no CEL rule for them (as above)',
  'key-prefix-too-long.yaml':
    'the 253-character limit of the DNS prefix of a qualified name cannot be written as a pattern; the schema bounds the whole key (317) and the name part (63)',
};

describe('valid PodMutations', () => {
  const valid = loadCorpus('valid');

  it('include the complete example of the API reference', () => {
    expect(valid.map(({ file }) => file)).toContain('migrate-legacy-pool.yaml');
  });

  it.each(valid.map((entry) => [entry.file, entry] as const))(
    '%s is accepted by the CRD and by the validator',
    (_file, entry) => {
      expect(admit(entry.resource).errors).toEqual([]);
      expect(validatorIssues(entry)).toEqual([]);
    },
  );
});

describe('invalid PodMutations', () => {
  const invalid = loadCorpus('invalid');

  it.each(invalid.map((entry) => [entry.file, entry] as const))(
    '%s is rejected by the CRD for the reason it names',
    (_file, entry) => {
      expect(entry.expectedRejection, 'the file names its CRD rejection in a "# crd:" line').toBeDefined();
      const rejections = admit(entry.resource).errors.map(({ field, message }) => `${field}: ${message}`);
      expect(
        rejections.some((rejection) => rejection.includes(entry.expectedRejection!)),
        rejections.join('\n'),
      ).toBe(true);
    },
  );

  it.each(invalid.map((entry) => [entry.file, entry] as const))(
    '%s is rejected by the validator at the field the CRD rejects',
    (_file, entry) => {
      const crdFields = admit(entry.resource).errors.map(({ field }) => field);
      const issueFields = validatorIssues(entry).map(({ field }) => field);
      expect(issueFields.length).toBeGreaterThan(0);
      const sameField = crdFields.some((crdField) =>
        issueFields.some(
          (issue) => issue === crdField || issue.startsWith(`${crdField}.`) || issue.startsWith(`${crdField}[`),
        ),
      );
      expect(sameField, `CRD: ${crdFields.join(', ')}; validator: ${issueFields.join(', ')}`).toBe(true);
    },
  );

  it('exercise every CEL rule of the CRD', () => {
    const rejectingRules = new Set(
      invalid.flatMap((entry) =>
        admit(entry.resource).errors.flatMap(({ rule }) => (rule === undefined ? [] : [rule])),
      ),
    );
    const unexercised = [...new Set(allRules(schema))].filter((rule) => !rejectingRules.has(rule));
    expect(unexercised).toEqual([]);
  });
});

describe('checks Kubernetes cannot express in the CRD', () => {
  const exceptions = loadCorpus('exceptions');

  it('are exactly the files of the exceptions corpus', () => {
    expect(exceptions.map(({ file }) => file)).toEqual(Object.keys(NOT_EXPRESSIBLE).sort());
  });

  it.each(exceptions.map((entry) => [entry.file, entry] as const))(
    '%s is accepted by the CRD and rejected by the validator',
    (file, entry) => {
      expect(NOT_EXPRESSIBLE[file]).toBeDefined();
      expect(admit(entry.resource).errors).toEqual([]);
      expect(validatorIssues(entry).length).toBeGreaterThan(0);
    },
  );
});

describe('the API server emulation', () => {
  const rule = { apiVersion: 'agent.cloudpilot.ai/v1alpha1', kind: 'PodMutation', metadata: { name: 'r' } };

  it('applies the schema defaults of enable and priority before the CEL rules run', () => {
    const probe = createCrdAdmission({
      ...crd,
      spec: {
        ...crd.spec,
        versions: [
          {
            ...crd.spec.versions[0]!,
            schema: {
              openAPIV3Schema: {
                ...schema,
                'x-kubernetes-validations': [
                  { rule: 'self.spec.enable == false && self.spec.priority == 0', message: 'defaults missing' },
                ],
              },
            },
          },
        ],
      },
    });
    expect(
      probe({
        ...rule,
        spec: { workloadSelector: { all: true }, mutationAdd: { annotations: { 'example.com/a': 'b' } } },
      }).errors,
    ).toEqual([]);
  });

  it('evaluates rules with self bound to the node they are attached to', () => {
    const verdict = admit({
      ...rule,
      spec: {
        workloadSelector: { all: true },
        mutationRemove: { nodeAffinity: { keys: ['example.com/a', 'karpenter.sh/capacity-type'] } },
      },
    });
    expect(verdict.errors.map(({ field }) => field)).toEqual(['spec.mutationRemove.nodeAffinity.keys[1]']);
  });

  it('refuses a CRD that uses a schema keyword it does not emulate', () => {
    const widened = {
      ...crd,
      spec: {
        ...crd.spec,
        versions: [{ ...crd.spec.versions[0]!, schema: { openAPIV3Schema: { ...schema, oneOf: [] } } }],
      },
    };
    expect(() => createCrdAdmission(widened as never)).toThrow(/oneOf/);
  });
});
