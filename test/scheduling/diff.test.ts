/** The semantic scheduling diff: what a person reads, and the laws it keeps. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  diffScheduling,
  preferenceFromKubernetes,
  sameScheduling,
  schedulingDiffLines,
  schedulingDiffSummary,
  termFromKubernetes,
  tolerationIdentity,
  type NodeSelectorTerm,
  type PreferredSchedulingTerm,
  type SchedulingFields,
  type Term,
  type Toleration,
} from '../../lib/scheduling/index.ts';
import { type KeyChange, type SchedulingDiff, isEmptySchedulingDiff } from '../../lib/scheduling/diff.ts';
import { type NodeSelectorRequirement } from '../../lib/scheduling/core-shapes.ts';

const POOL = 'example.com/node-pool';
const ARCH = 'kubernetes.io/arch';
const ZONE = 'topology.kubernetes.io/zone';

const requirement = (key: string, operator: string, values?: string[]): NodeSelectorRequirement => ({
  key,
  operator,
  ...(values ? { values } : {}),
});
const required = (...terms: NodeSelectorRequirement[][]): SchedulingFields => ({
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })),
    },
  },
});

function rendered(before: SchedulingFields, after: SchedulingFields): string[] {
  return schedulingDiffLines(diffScheduling(before, after)).map(({ sign, text }) => `${sign} ${text}`);
}

const NOT_READY: Toleration = {
  key: 'node.kubernetes.io/not-ready',
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
};

describe('the scheduling diff as a person reads it', () => {
  it.each([
    {
      name: 'a requirement replaced in a term reads as the term losing one and gaining the other',
      before: required([requirement(POOL, 'In', ['legacy']), requirement(ARCH, 'In', ['amd64'])]),
      after: required([requirement(ARCH, 'In', ['amd64']), requirement(POOL, 'In', ['merged'])]),
      lines: [
        '  required node affinity (terms ORed):',
        '    term 1:',
        '      kubernetes.io/arch In [amd64]',
        '-     example.com/node-pool In [legacy]',
        '+     example.com/node-pool In [merged]',
      ],
    },
    {
      name: 'a requirement that only moved within its term, with its values reordered, is no change but a note',
      before: required([requirement(POOL, 'In', ['a', 'b']), requirement(ARCH, 'Exists')]),
      after: required([requirement(ARCH, 'Exists'), requirement(POOL, 'In', ['b', 'a'])]),
      lines: ['  required node affinity (terms ORed): reordered only (the same as a set)'],
    },
    {
      name: 'a 1 x 2 product keeps the current term with the first added requirement and adds the other combination',
      before: required([requirement(ARCH, 'In', ['amd64'])]),
      after: required(
        [requirement(ARCH, 'In', ['amd64']), requirement(POOL, 'In', ['a'])],
        [requirement(ARCH, 'In', ['amd64']), requirement(POOL, 'In', ['b'])],
      ),
      lines: [
        '  required node affinity (terms ORed):',
        '    term 1:',
        '      kubernetes.io/arch In [amd64]',
        '+     example.com/node-pool In [a]',
        '+   new term 2:',
        '+     kubernetes.io/arch In [amd64]',
        '+     example.com/node-pool In [b]',
      ],
    },
    {
      name: 'a 2 x 2 product pairs each current term with one combination and adds the other two',
      before: required([requirement(ZONE, 'In', ['a'])], [requirement(ZONE, 'In', ['b'])]),
      after: required(
        [requirement(ZONE, 'In', ['a']), requirement(POOL, 'In', ['x'])],
        [requirement(ZONE, 'In', ['a']), requirement(POOL, 'In', ['y'])],
        [requirement(ZONE, 'In', ['b']), requirement(POOL, 'In', ['x'])],
        [requirement(ZONE, 'In', ['b']), requirement(POOL, 'In', ['y'])],
      ),
      lines: [
        '  required node affinity (terms ORed):',
        '    term 1:',
        '      topology.kubernetes.io/zone In [a]',
        '+     example.com/node-pool In [x]',
        '+   new term 2:',
        '+     topology.kubernetes.io/zone In [a]',
        '+     example.com/node-pool In [y]',
        '    term 3 (was term 2):',
        '      topology.kubernetes.io/zone In [b]',
        '+     example.com/node-pool In [x]',
        '+   new term 4:',
        '+     topology.kubernetes.io/zone In [b]',
        '+     example.com/node-pool In [y]',
      ],
    },
    {
      name: 'a term dropped because it became redundant reads as removed, its surviving neighbour as unchanged',
      before: required(
        [requirement(POOL, 'In', ['legacy']), requirement(ZONE, 'In', ['a'])],
        [requirement(ZONE, 'In', ['a'])],
      ),
      after: required([requirement(ZONE, 'In', ['a'])]),
      lines: [
        '  required node affinity (terms ORed):',
        '    term 1 (was term 2, unchanged): topology.kubernetes.io/zone In [a]',
        '-   removed term (was term 1):',
        '-     example.com/node-pool In [legacy]',
        '-     topology.kubernetes.io/zone In [a]',
      ],
    },
    {
      name: 'a required selector removed whole reads as each of its terms removed',
      before: required([requirement(POOL, 'NotIn', ['old', 'older'])]),
      after: {},
      lines: [
        '  required node affinity (terms ORed):',
        '-   removed term (was term 1):',
        '-     example.com/node-pool NotIn [old, older]',
      ],
    },
    {
      name: 'matchFields, Gt operands and values that are not label syntax print unambiguously',
      before: {},
      after: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  requirement('example.com/generation', 'Gt', ['5']),
                  requirement(ZONE, 'In', ['', 'a b']),
                ],
                matchFields: [requirement('metadata.name', 'In', ['node-1'])],
              },
            ],
          },
        },
      },
      lines: [
        '  required node affinity (terms ORed):',
        '+   new term 1:',
        '+     example.com/generation Gt 5',
        '+     topology.kubernetes.io/zone In ["", "a b"]',
        '+     field metadata.name In [node-1]',
      ],
    },
    {
      name: 'tolerations are added and removed whole; an absent operator is Equal',
      before: {
        tolerations: [
          { key: 'example.com/zone-retiring', operator: 'Exists', effect: 'NoSchedule' },
          NOT_READY,
          { key: 'team', value: 'a' },
        ],
      },
      after: {
        tolerations: [
          { key: 'team', operator: 'Equal', value: 'a' },
          NOT_READY,
          { key: 'example.com/spot', operator: 'Equal', value: 'true', effect: 'NoSchedule' },
          { operator: 'Exists' },
        ],
      },
      lines: [
        '  tolerations:',
        '-   example.com/zone-retiring:NoSchedule op=Exists',
        '+   example.com/spot=true:NoSchedule',
        '+   op=Exists',
      ],
    },
    {
      name: 'a nodeSelector key whose value changed reads as the old pair removed and the new one added',
      before: { nodeSelector: { [POOL]: 'batch-ondemand', 'kubernetes.io/os': 'linux' } },
      after: { nodeSelector: { 'kubernetes.io/os': 'linux', [POOL]: 'batch-spot' } },
      lines: ['  nodeSelector:', '-   example.com/node-pool=batch-ondemand', '+   example.com/node-pool=batch-spot'],
    },
    {
      name: 'a preferred term added reads with its weight',
      before: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, preference: { matchExpressions: [requirement(ZONE, 'In', ['a'])] } },
          ],
        },
      },
      after: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, preference: { matchExpressions: [requirement(ZONE, 'In', ['a'])] } },
            { weight: 60, preference: { matchExpressions: [requirement(ARCH, 'In', ['arm64'])] } },
          ],
        },
      },
      lines: ['  preferred node affinity:', '+   weight 60: kubernetes.io/arch In [arm64]'],
    },
    {
      name: 'annotations read per key: changed, added (an empty value quoted) and removed, by key',
      before: { annotations: { kept: '1', changed: 'old', gone: 'x' } },
      after: { annotations: { kept: '1', changed: 'new', added: '' } },
      lines: ['  annotations:', '+   added: ""', '-   changed: old', '+   changed: new', '-   gone: x'],
    },
    {
      name: 'a spread constraint added reads on one line, its topology key first',
      before: { topologySpreadConstraints: [] },
      after: {
        topologySpreadConstraints: [
          {
            labelSelector: { matchLabels: { app: 'web' } },
            whenUnsatisfiable: 'ScheduleAnyway',
            topologyKey: 'node.kubernetes.io/instance-type',
            maxSkew: 1,
          },
        ],
      },
      lines: [
        '  topologySpreadConstraints:',
        '+   topologyKey=node.kubernetes.io/instance-type maxSkew=1 whenUnsatisfiable=ScheduleAnyway labelSelector={"matchLabels":{"app":"web"}}',
      ],
    },
  ])('$name', ({ before, after, lines }) => {
    expect(rendered(before, after)).toEqual(lines);
  });

  it('prints the fields in the order of a Pod and null fields as absent', () => {
    const before: SchedulingFields = {
      annotations: null,
      nodeSelector: null,
      tolerations: null,
      nodeAffinity: null,
      topologySpreadConstraints: null,
    };
    const after: SchedulingFields = {
      ...required([requirement(ARCH, 'Exists')]),
      tolerations: [NOT_READY],
      nodeSelector: { a: 'b' },
      annotations: { c: 'd' },
    };
    expect(rendered(before, after)).toEqual([
      '  annotations:',
      '+   c: d',
      '  nodeSelector:',
      '+   a=b',
      '  tolerations:',
      '+   node.kubernetes.io/not-ready:NoExecute op=Exists for 300s',
      '  required node affinity (terms ORed):',
      '+   new term 1:',
      '+     kubernetes.io/arch Exists',
    ]);
  });
});

// A small space of keys and values, so that random Pods share requirements, terms and tolerations often.
const KEYS = [POOL, ZONE, ARCH];
const VALUES = ['a', 'b', 'c'];
const arbitraryRequirement: fc.Arbitrary<NodeSelectorRequirement> = fc.oneof(
  fc.record({
    key: fc.constantFrom(...KEYS),
    operator: fc.constantFrom('In', 'NotIn'),
    values: fc.uniqueArray(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constantFrom('Exists', 'DoesNotExist') }),
  fc.record({
    key: fc.constant('example.com/generation'),
    operator: fc.constantFrom('Gt', 'Lt'),
    values: fc.constantFrom(['1'], ['3']),
  }),
);
const arbitraryTerm: fc.Arbitrary<NodeSelectorTerm> = fc.record(
  {
    matchExpressions: fc.array(arbitraryRequirement, { maxLength: 3 }),
    matchFields: fc.array(fc.constant(requirement('metadata.name', 'In', ['node-1'])), { maxLength: 1 }),
  },
  { requiredKeys: ['matchExpressions'] },
);
const arbitraryToleration: fc.Arbitrary<Toleration> = fc.oneof(
  fc.record({
    key: fc.constantFrom(...KEYS),
    operator: fc.constant('Exists'),
    effect: fc.constantFrom('NoSchedule', 'NoExecute'),
  }),
  fc.record(
    {
      key: fc.constantFrom(...KEYS),
      operator: fc.constantFrom('Equal', undefined),
      value: fc.constantFrom(...VALUES),
      effect: fc.constant('NoSchedule'),
    },
    { requiredKeys: ['key', 'value', 'effect'] },
  ),
  fc.record({
    key: fc.constantFrom(...KEYS),
    operator: fc.constant('Exists'),
    effect: fc.constant('NoExecute'),
    tolerationSeconds: fc.constantFrom(60, 300),
  }),
);
const arbitraryMap = fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 3 });
const arbitraryFields: fc.Arbitrary<SchedulingFields> = fc.record({
  annotations: fc.option(arbitraryMap, { nil: undefined }),
  nodeSelector: fc.option(arbitraryMap, { nil: undefined }),
  tolerations: fc.option(fc.array(arbitraryToleration, { maxLength: 4 }), { nil: undefined }),
  nodeAffinity: fc.record(
    {
      requiredDuringSchedulingIgnoredDuringExecution: fc.record({
        nodeSelectorTerms: fc.array(arbitraryTerm, { maxLength: 4 }),
      }),
      preferredDuringSchedulingIgnoredDuringExecution: fc.array(
        fc.record({ weight: fc.constantFrom(10, 50), preference: arbitraryTerm }),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: [] },
  ),
  topologySpreadConstraints: fc.array(
    fc.record({ topologyKey: fc.constantFrom(ZONE, 'kubernetes.io/hostname'), maxSkew: fc.constantFrom(1, 2) }),
    { maxLength: 2 },
  ),
});

/** A deterministic shuffle (mulberry32), so that fast-check can replay and shrink the seed. */
function shuffler(seed: number): <T>(items: readonly T[] | undefined) => T[] {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value ^= value + Math.imul(value ^ (value >>> 7), 61 | value);
    return ((value ^ (value >>> 14)) >>> 0) / 2 ** 32;
  };
  return <T>(items: readonly T[] | undefined): T[] => {
    const copy = [...(items ?? [])];
    for (let index = copy.length - 1; index > 0; index -= 1) {
      const other = Math.floor(next() * (index + 1));
      [copy[index], copy[other]] = [copy[other]!, copy[index]!];
    }
    return copy;
  };
}

/** The same fields with every list reordered: terms, requirements, values, preferences, tolerations, spread constraints. */
function reordered(fields: SchedulingFields, seed: number): SchedulingFields {
  const shuffle = shuffler(seed);
  const term = (source: NodeSelectorTerm): NodeSelectorTerm => ({
    matchExpressions: shuffle(source.matchExpressions).map((item) => ({
      ...item,
      ...(item.values ? { values: shuffle(item.values) } : {}),
    })),
    ...(source.matchFields ? { matchFields: shuffle(source.matchFields) } : {}),
  });
  const affinity = fields.nodeAffinity;
  const requiredTerms = affinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  const preferred = affinity?.preferredDuringSchedulingIgnoredDuringExecution;
  return {
    ...fields,
    tolerations: shuffle(fields.tolerations ?? []),
    topologySpreadConstraints: shuffle(fields.topologySpreadConstraints ?? []),
    nodeAffinity: {
      ...(requiredTerms
        ? { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: shuffle(requiredTerms).map(term) } }
        : {}),
      ...(preferred
        ? {
            preferredDuringSchedulingIgnoredDuringExecution: shuffle(preferred).map(
              (item): PreferredSchedulingTerm => ({ ...item, preference: term(item.preference) }),
            ),
          }
        : {}),
    },
  };
}

const sorted = (items: readonly string[]): string[] => [...items].sort();
const requirementSet = (term: Term): string => JSON.stringify(sorted([...term.ids]));

/** What a diff says, without where: positions and written order left out. */
function content(diff: SchedulingDiff): unknown {
  const ids = (items: readonly { readonly id: string }[]) => sorted(items.map((item) => item.id));
  const { required } = diff;
  return {
    annotations: diff.annotations,
    nodeSelector: diff.nodeSelector,
    tolerations: [diff.tolerations.removed, diff.tolerations.added].map((list) => sorted(list.map(tolerationIdentity))),
    pairs: sorted(
      required.pairs.map((pair) =>
        JSON.stringify([pair.before.term.id, pair.after.term.id, ids(pair.removed), ids(pair.added)]),
      ),
    ),
    removedTerms: ids(required.removed.map((placed) => placed.term)),
    addedTerms: ids(required.added.map((placed) => placed.term)),
    preferred: [ids(diff.preferred.removed), ids(diff.preferred.added)],
    spread: [diff.topologySpreadConstraints.removed, diff.topologySpreadConstraints.added].map((list) =>
      sorted(list.map((item) => JSON.stringify(item))),
    ),
  };
}

/** Removes one occurrence of each of `taken` from `items`; fails the test when one is missing. */
function without(items: readonly string[], taken: readonly string[]): string[] {
  const left = [...items];
  for (const item of taken) {
    const index = left.indexOf(item);
    expect(index, `${item} is among the entries before`).toBeGreaterThanOrEqual(0);
    left.splice(index, 1);
  }
  return left;
}

function applyKeys(
  before: Readonly<Record<string, string>> | null | undefined,
  changes: readonly KeyChange[],
): Record<string, string> {
  const result: Record<string, string> = { ...before };
  for (const change of changes) {
    if (change.before !== undefined) expect(result[change.key]).toBe(change.before);
    if (change.after === undefined) delete result[change.key];
    else result[change.key] = change.after;
  }
  return result;
}

const requiredOf = (fields: SchedulingFields) =>
  (fields.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).map(
    termFromKubernetes,
  );

describe('the scheduling diff laws', () => {
  it('finds nothing between a Pod and itself', () => {
    fc.assert(
      fc.property(arbitraryFields, (fields) => {
        const diff = diffScheduling(fields, fields);
        expect(isEmptySchedulingDiff(diff)).toBe(true);
        expect(schedulingDiffLines(diff)).toEqual([]);
      }),
    );
  });

  it('finds no change, only notes, between a Pod and the same Pod with every list reordered', () => {
    fc.assert(
      fc.property(arbitraryFields, fc.integer(), (fields, seed) => {
        const diff = diffScheduling(fields, reordered(fields, seed));
        expect(isEmptySchedulingDiff(diff)).toBe(true);
        for (const { sign, text } of schedulingDiffLines(diff)) {
          expect(sign).toBe(' ');
          expect(text).toMatch(/: reordered only \(the same as a set\)$/);
        }
      }),
    );
  });

  it('says the same whatever the order of terms, requirements, values, preferences and tolerations on either side', () => {
    fc.assert(
      fc.property(
        arbitraryFields,
        arbitraryFields,
        fc.integer(),
        fc.integer(),
        (before, after, seedBefore, seedAfter) => {
          expect(content(diffScheduling(reordered(before, seedBefore), reordered(after, seedAfter)))).toEqual(
            content(diffScheduling(before, after)),
          );
        },
      ),
    );
  });

  it('turns the fields before into the fields after when its changes are applied, field by field', () => {
    fc.assert(
      fc.property(arbitraryFields, arbitraryFields, (before, after) => {
        const diff = diffScheduling(before, after);
        expect(applyKeys(before.annotations, diff.annotations)).toEqual({ ...after.annotations });
        expect(applyKeys(before.nodeSelector, diff.nodeSelector)).toEqual({ ...after.nodeSelector });

        const tolerations = (list: readonly Toleration[] | null | undefined) => (list ?? []).map(tolerationIdentity);
        const keptTolerations = without(
          tolerations(before.tolerations),
          diff.tolerations.removed.map(tolerationIdentity),
        );
        expect(sorted([...keptTolerations, ...diff.tolerations.added.map(tolerationIdentity)])).toEqual(
          sorted(tolerations(after.tolerations)),
        );

        const termsBefore = requiredOf(before);
        const termsAfter = requiredOf(after);
        const { pairs, removed, added } = diff.required;
        for (const pair of pairs) {
          const next = new Set(pair.before.term.ids);
          for (const item of pair.removed) expect(next.delete(item.id)).toBe(true);
          for (const item of pair.added) next.add(item.id);
          expect(JSON.stringify(sorted([...next]))).toBe(requirementSet(pair.after.term));
        }
        // Every term before is paired or removed, every term after paired or added, each exactly once.
        expect(
          sorted(
            [...pairs.map((pair) => pair.before.position), ...removed.map((placed) => placed.position)].map(String),
          ),
        ).toEqual(sorted(termsBefore.map((_, index) => String(index))));
        expect(
          sorted([...pairs.map((pair) => pair.after.position), ...added.map((placed) => placed.position)].map(String)),
        ).toEqual(sorted(termsAfter.map((_, index) => String(index))));
        for (const placed of [...pairs.map((pair) => pair.before), ...removed])
          expect(placed.term.id).toBe(termsBefore[placed.position]!.id);
        for (const placed of [...pairs.map((pair) => pair.after), ...added])
          expect(placed.term.id).toBe(termsAfter[placed.position]!.id);

        const preferenceIds = (fields: SchedulingFields) =>
          (fields.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map(
            (item) => preferenceFromKubernetes(item).id,
          );
        const keptPreferences = without(
          preferenceIds(before),
          diff.preferred.removed.map((item) => item.id),
        );
        expect(sorted([...keptPreferences, ...diff.preferred.added.map((item) => item.id)])).toEqual(
          sorted(preferenceIds(after)),
        );

        const spread = (list: readonly unknown[]) => list.map((item) => JSON.stringify(item));
        const keptSpread = without(
          spread(before.topologySpreadConstraints ?? []),
          spread(diff.topologySpreadConstraints.removed),
        );
        expect(sorted([...keptSpread, ...spread(diff.topologySpreadConstraints.added)])).toEqual(
          sorted(spread(after.topologySpreadConstraints ?? [])),
        );
      }),
    );
  });

  it('pairs a changed term with the term after that shares the most requirements with it, and leaves unpaired only terms that share none', () => {
    fc.assert(
      fc.property(arbitraryFields, arbitraryFields, (before, after) => {
        const { pairs, removed, added } = diffScheduling(before, after).required;
        for (const gone of removed)
          for (const other of added) expect([...other.term.ids].some((id) => gone.term.ids.has(id))).toBe(false);
        for (const pair of pairs) {
          const shared = pair.before.term.ids.size - pair.removed.length;
          // Greedy, best first: no term left without a predecessor shares more with this pair's term before.
          for (const other of added)
            expect([...other.term.ids].filter((id) => pair.before.term.ids.has(id)).length).toBeLessThanOrEqual(shared);
          if (pair.removed.length > 0 || pair.added.length > 0) expect(shared).toBeGreaterThan(0);
        }
      }),
    );
  });
});

const SPOT: Toleration = { key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' };
const preferring = (...terms: { weight: number; requirements: NodeSelectorRequirement[] }[]): SchedulingFields => ({
  nodeAffinity: {
    preferredDuringSchedulingIgnoredDuringExecution: terms.map(({ weight, requirements }) => ({
      weight,
      preference: { matchExpressions: requirements },
    })),
  },
});

describe('the scheduling diff as Kubernetes reads repeats', () => {
  it('reads a repeated toleration as no change, with a note', () => {
    const diff = diffScheduling({ tolerations: [SPOT, NOT_READY] }, { tolerations: [SPOT, NOT_READY, SPOT] });

    expect(isEmptySchedulingDiff(diff)).toBe(true);
    expect(rendered({ tolerations: [SPOT, NOT_READY] }, { tolerations: [SPOT, NOT_READY, SPOT] })).toEqual([
      '  tolerations: repeats only (the same as a set)',
    ]);
  });

  it('reads a repeated required term as no change, with a note', () => {
    const term = [requirement(POOL, 'In', ['merged'])];

    expect(isEmptySchedulingDiff(diffScheduling(required(term), required(term, term)))).toBe(true);
    expect(rendered(required(term), required(term, term))).toEqual([
      '  required node affinity (terms ORed): repeats only (the same as a set)',
    ]);
  });

  it('reads a repeated preferred term as a change, since the scheduler adds its weight once per term', () => {
    const term = { weight: 10, requirements: [requirement(ZONE, 'In', ['a'])] };

    expect(rendered(preferring(term), preferring(term, term))).toEqual([
      '  preferred node affinity:',
      '+   weight 10: topology.kubernetes.io/zone In [a]',
    ]);
  });

  it('reads a spread constraint with the requirements the API server merges for matchLabelKeys as the same', () => {
    const template = { topologyKey: ZONE, maxSkew: 1, matchLabelKeys: ['pod-template-hash'], labelSelector: {} };
    const merged = {
      ...template,
      labelSelector: { matchExpressions: [{ key: 'pod-template-hash', operator: 'In', values: ['5d8f7c9b4'] }] },
    };

    expect(
      isEmptySchedulingDiff(
        diffScheduling({ topologySpreadConstraints: [merged] }, { topologySpreadConstraints: [template] }),
      ),
    ).toBe(true);
  });
});

describe('the scheduling diff on one line', () => {
  it('names each changed field with its removed then added entries, in the texts of the lines', () => {
    const before: SchedulingFields = {
      nodeSelector: { [POOL]: 'batch-ondemand' },
      ...required([requirement(POOL, 'In', ['legacy']), requirement(ARCH, 'In', ['amd64'])]),
    };
    const after: SchedulingFields = {
      nodeSelector: { [POOL]: 'batch-spot' },
      tolerations: [NOT_READY, SPOT],
      ...required([requirement(ARCH, 'In', ['amd64']), requirement(POOL, 'In', ['merged'])]),
    };

    expect(schedulingDiffSummary(diffScheduling(before, after))).toBe(
      'nodeSelector: -example.com/node-pool=batch-ondemand +example.com/node-pool=batch-spot; ' +
        'tolerations: +example.com/spot:NoSchedule op=Exists +node.kubernetes.io/not-ready:NoExecute op=Exists for 300s; ' +
        'required node affinity (terms ORed): -{example.com/node-pool In [legacy], kubernetes.io/arch In [amd64]} ' +
        '+{example.com/node-pool In [merged], kubernetes.io/arch In [amd64]}',
    );
  });

  it('puts the annotations last and a preferred term in braces with its weight', () => {
    const after: SchedulingFields = {
      annotations: { team: 'payments' },
      ...preferring({ weight: 60, requirements: [requirement(ARCH, 'In', ['arm64'])] }),
    };

    expect(schedulingDiffSummary(diffScheduling({}, after))).toBe(
      'preferred node affinity: +{weight 60: kubernetes.io/arch In [arm64]}; annotations: +team: payments',
    );
  });

  it('is empty exactly when the diff is, and the same whatever the order of either side', () => {
    fc.assert(
      fc.property(
        arbitraryFields,
        arbitraryFields,
        fc.integer(),
        fc.integer(),
        (before, after, seedBefore, seedAfter) => {
          const line = schedulingDiffSummary(diffScheduling(before, after));
          expect(line === '').toBe(isEmptySchedulingDiff(diffScheduling(before, after)));
          expect(
            schedulingDiffSummary(diffScheduling(reordered(before, seedBefore), reordered(after, seedAfter))),
          ).toBe(line);
        },
      ),
    );
  });
});

const REPEATABLE = ['tolerations', 'required', 'preferred', 'spread'] as const;

/** The fields with the first entry of one list written twice: the same as a set, another multiset. */
function repeated(fields: SchedulingFields, list: (typeof REPEATABLE)[number]): SchedulingFields {
  const twice = <T>(items: readonly T[] | null | undefined): T[] =>
    items === null || items === undefined || items.length === 0 ? [...(items ?? [])] : [...items, items[0]!];
  const affinity = fields.nodeAffinity ?? {};
  const terms = affinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  switch (list) {
    case 'tolerations':
      return { ...fields, tolerations: twice(fields.tolerations) };
    case 'spread':
      return { ...fields, topologySpreadConstraints: twice(fields.topologySpreadConstraints) };
    case 'required':
      return terms === undefined
        ? fields
        : {
            ...fields,
            nodeAffinity: {
              ...affinity,
              requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: twice(terms) },
            },
          };
    case 'preferred':
      return {
        ...fields,
        nodeAffinity: {
          ...affinity,
          preferredDuringSchedulingIgnoredDuringExecution: twice(
            affinity.preferredDuringSchedulingIgnoredDuringExecution,
          ),
        },
      };
  }
}

const FIELD_NAMES = [
  'annotations',
  'nodeSelector',
  'tolerations',
  'nodeAffinity',
  'topologySpreadConstraints',
] as const;

/** Two Pods' fields: unrelated; one reordered with a list repeated; or alike but for one field. */
const arbitraryPair: fc.Arbitrary<readonly [SchedulingFields, SchedulingFields]> = fc.oneof(
  fc.tuple(arbitraryFields, arbitraryFields),
  fc
    .tuple(arbitraryFields, fc.integer(), fc.constantFrom(...REPEATABLE))
    .map(([fields, seed, list]) => [fields, reordered(repeated(fields, list), seed)] as const),
  fc
    .tuple(arbitraryFields, arbitraryFields, fc.constantFrom(...FIELD_NAMES))
    .map(([fields, other, name]) => [fields, { ...fields, [name]: other[name] }] as const),
);

describe('sameScheduling', () => {
  it('holds exactly when the diff is empty, for unrelated Pods, reordered and repeated ones, and Pods one field apart', () => {
    fc.assert(
      fc.property(arbitraryPair, ([left, right]) => {
        expect(sameScheduling(left, right)).toBe(isEmptySchedulingDiff(diffScheduling(left, right)));
      }),
    );
  });

  it('holds between a Pod and itself, and says the same whichever Pod comes first', () => {
    fc.assert(
      fc.property(arbitraryPair, ([left, right]) => {
        expect(sameScheduling(left, left)).toBe(true);
        expect(sameScheduling(right, left)).toBe(sameScheduling(left, right));
      }),
    );
  });

  const term = [requirement(POOL, 'In', ['merged', 'legacy'])];
  const template = { topologyKey: ZONE, maxSkew: 1, matchLabelKeys: ['pod-template-hash'] };
  const merged = {
    ...template,
    labelSelector: { matchExpressions: [{ key: 'pod-template-hash', operator: 'In', values: ['5d8f7c9b4'] }] },
  };
  it.each([
    {
      name: 'absent and null fields are alike',
      left: {},
      right: { nodeSelector: null, tolerations: null },
      same: true,
    },
    {
      name: 'tolerations in another order and repeated are alike',
      left: { tolerations: [SPOT, NOT_READY] },
      right: { tolerations: [NOT_READY, SPOT, NOT_READY] },
      same: true,
    },
    {
      name: 'a toleration without an operator is one with Equal',
      left: { tolerations: [{ key: POOL, value: 'spot', effect: 'NoSchedule' }] },
      right: { tolerations: [{ key: POOL, operator: 'Equal', value: 'spot', effect: 'NoSchedule' }] },
      same: true,
    },
    {
      name: 'a required term with its values reordered and written twice is alike',
      left: required(term),
      right: required([requirement(POOL, 'In', ['legacy', 'merged'])], term),
      same: true,
    },
    {
      name: 'a preferred term written twice differs, since the scheduler adds its weight twice',
      left: preferring({ weight: 10, requirements: term }),
      right: preferring({ weight: 10, requirements: term }, { weight: 10, requirements: term }),
      same: false,
    },
    {
      name: 'a spread constraint with what the API server merges for matchLabelKeys is alike',
      left: { topologySpreadConstraints: [template] },
      right: { topologySpreadConstraints: [merged] },
      same: true,
    },
    {
      name: 'an annotation with another value differs',
      left: { annotations: { team: 'payments' } },
      right: { annotations: { team: 'search' } },
      same: false,
    },
  ])('says $name', ({ left, right, same }: { left: SchedulingFields; right: SchedulingFields; same: boolean }) => {
    expect(sameScheduling(left, right)).toBe(same);
  });
});
