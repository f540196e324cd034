import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  andTerms,
  canonicalizeTerms,
  labelRequirement,
  term,
  termCanMatchSomeNode,
  termFromKubernetes,
  type Term,
} from '../../lib/scheduling/index.ts';
import { randomNode } from '../support/arbitraries.ts';
import { selectorMatchesNode, termMatchesNode } from '../../lib/scheduling/semantics.ts';

const KEYS = ['example.com/pool', 'topology.kubernetes.io/zone'];
const requirement = fc
  .oneof(
    fc.record({
      key: fc.constantFrom(...KEYS),
      operator: fc.constantFrom('In', 'NotIn'),
      values: fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 2 }),
    }),
    fc.record({
      key: fc.constantFrom(...KEYS, 'example.com/generation'),
      operator: fc.constantFrom('Exists', 'DoesNotExist'),
    }),
    fc.record({
      key: fc.constant('example.com/generation'),
      operator: fc.constantFrom('Gt', 'Lt'),
      values: fc.constantFrom(['1'], ['3']),
    }),
  )
  .map((item) => labelRequirement(item.key, item.operator, 'values' in item ? item.values : []));
const nonEmptyTerm: fc.Arbitrary<Term> = fc
  .array(requirement, { minLength: 1, maxLength: 3 })
  .map((items) => term(items));
const selector = fc.array(nonEmptyTerm, { minLength: 1, maxLength: 5 });
const nodes = fc.array(randomNode, { minLength: 25, maxLength: 25 });

describe('requirement identity', () => {
  it('ignores the order and duplicates of values ("Values are compared as a set")', () => {
    expect(labelRequirement('k', 'In', ['b', 'a', 'b']).id).toBe(labelRequirement('k', 'In', ['a', 'b']).id);
  });

  it('distinguishes operators and keys', () => {
    expect(labelRequirement('k', 'In', ['a']).id).not.toBe(labelRequirement('k', 'NotIn', ['a']).id);
    expect(labelRequirement('k', 'In', ['a']).id).not.toBe(labelRequirement('j', 'In', ['a']).id);
  });

  it('keeps label requirements and matchFields apart', () => {
    const fields = termFromKubernetes({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] });
    const labels = termFromKubernetes({ matchExpressions: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] });
    expect(fields.id).not.toBe(labels.id);
  });
});

describe('canonicalizeTerms', () => {
  it('is idempotent', () => {
    fc.assert(
      fc.property(selector, (terms) => {
        const once = canonicalizeTerms(terms);
        expect(canonicalizeTerms(once).map((item) => item.id)).toEqual(once.map((item) => item.id));
      }),
    );
  });

  it('selects exactly the nodes the uncanonicalized OR selects', () => {
    fc.assert(
      fc.property(selector, nodes, (terms, sample) => {
        const canonical = canonicalizeTerms(terms);
        for (const node of sample) expect(selectorMatchesNode(canonical, node)).toBe(selectorMatchesNode(terms, node));
      }),
    );
  });

  it('leaves no term that contains another', () => {
    fc.assert(
      fc.property(selector, (terms) => {
        const canonical = canonicalizeTerms(terms);
        for (const [i, left] of canonical.entries()) {
          for (const [j, right] of canonical.entries()) {
            if (i !== j) expect([...right.ids].every((id) => left.ids.has(id))).toBe(false);
          }
        }
      }),
    );
  });

  it('keeps the first of identical terms in their original order', () => {
    const a = term([labelRequirement('a', 'Exists')]);
    const b = term([labelRequirement('b', 'Exists')]);
    expect(canonicalizeTerms([b, a, term([labelRequirement('b', 'Exists')])]).map((item) => item.id)).toEqual([
      b.id,
      a.id,
    ]);
  });
});

describe('andTerms', () => {
  it('selects a node exactly when both ORs select it', () => {
    fc.assert(
      fc.property(selector, selector, nodes, (left, right, sample) => {
        const combined = andTerms(left, right);
        for (const node of sample) {
          expect(selectorMatchesNode(combined, node)).toBe(
            selectorMatchesNode(left, node) && selectorMatchesNode(right, node),
          );
        }
      }),
    );
  });

  it('is idempotent: adding the same terms twice equals adding them once', () => {
    fc.assert(
      fc.property(selector, selector, (left, right) => {
        const once = andTerms(left, right);
        const twice = andTerms(once, right);
        expect(twice.map((item) => item.expressions.map((requirement) => requirement.id))).toEqual(
          once.map((item) => item.expressions.map((requirement) => requirement.id)),
        );
      }),
    );
  });
});

describe('termCanMatchSomeNode', () => {
  it.each([
    [
      'the same key with disjoint In sets',
      [
        ['k', 'In', ['a']],
        ['k', 'In', ['b']],
      ],
      false,
    ],
    [
      'In and DoesNotExist on one key',
      [
        ['k', 'In', ['a']],
        ['k', 'DoesNotExist', []],
      ],
      false,
    ],
    [
      'Exists and DoesNotExist on one key',
      [
        ['k', 'Exists', []],
        ['k', 'DoesNotExist', []],
      ],
      false,
    ],
    [
      'In values all excluded by NotIn',
      [
        ['k', 'In', ['a', 'b']],
        ['k', 'NotIn', ['a', 'b']],
      ],
      false,
    ],
    [
      'an empty integer range',
      [
        ['g', 'Gt', ['3']],
        ['g', 'Lt', ['4']],
      ],
      false,
    ],
    [
      'an In value outside Gt',
      [
        ['g', 'In', ['2']],
        ['g', 'Gt', ['3']],
      ],
      false,
    ],
    [
      'overlapping In sets',
      [
        ['k', 'In', ['a', 'b']],
        ['k', 'In', ['b']],
      ],
      true,
    ],
    ['NotIn alone', [['k', 'NotIn', ['a']]], true],
    [
      'a non-empty integer range',
      [
        ['g', 'Gt', ['3']],
        ['g', 'Lt', ['5']],
      ],
      true,
    ],
  ] as const)('is %s: %s', (_, requirements, expected) => {
    expect(
      termCanMatchSomeNode(
        term(requirements.map(([key, operator, values]) => labelRequirement(key, operator, values))),
      ),
    ).toBe(expected);
  });

  it('never calls a term unsatisfiable when some node satisfies it', () => {
    fc.assert(
      fc.property(nonEmptyTerm, nodes, (candidate, sample) => {
        if (sample.some((node) => termMatchesNode(candidate, node))) expect(termCanMatchSomeNode(candidate)).toBe(true);
      }),
    );
  });
});
