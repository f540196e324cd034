/**
 * The JSON shapes of `-o json` are documented and stable. The schemas below are the contract as docs/cli.md and
 * docs/operations.md document it, written down apart from the code on purpose: a change to a shape fails here until the
 * schema, and so the docs, are changed with it. The docs' examples are checked against the same schemas.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { clusterList, ledgerWith, MOVE_LEDGER, rulePaths, writeTemporary } from '../report/support.ts';
import { runPodmutationInProcess } from '../support/cli.ts';
import { EXAMPLES, fixturePath } from '../support/fixtures.ts';

const EXAMPLE_PODPLACEMENTS = fileURLToPath(new URL('../../examples/podplacements/', import.meta.url));

const closed = { additionalProperties: false } as const;
const Names = Type.Array(Type.String());

const INVALID_RESOURCE = Type.Object(
  {
    name: Type.String(),
    source: Type.String(),
    valid: Type.Literal(false),
    issues: Type.Array(Type.Object({ field: Type.String(), reason: Type.String() }, closed), { minItems: 1 }),
  },
  closed,
);
const PLACEMENT_MODE = Type.Union(['Spot', 'NonSpot', 'Diversity'].map((mode) => Type.Literal(mode)));

const VALIDATE = Type.Object(
  {
    rules: Type.Array(
      Type.Union([
        Type.Object(
          {
            name: Type.String(),
            source: Type.String(),
            valid: Type.Literal(true),
            enabled: Type.Boolean(),
            priority: Type.Integer(),
            enforcement: Type.Union([Type.Literal('enforce'), Type.Literal('audit')]),
            warnings: Type.Array(Type.Object({ field: Type.String(), reason: Type.String() }, closed)),
          },
          closed,
        ),
        INVALID_RESOURCE,
      ]),
    ),
    placements: Type.Array(
      Type.Union([
        Type.Object(
          {
            name: Type.String(),
            source: Type.String(),
            valid: Type.Literal(true),
            enabled: Type.Boolean(),
            priority: Type.Integer(),
            mode: PLACEMENT_MODE,
            warnings: Type.Array(Type.Object({ field: Type.String(), reason: Type.String() }, closed)),
          },
          closed,
        ),
        INVALID_RESOURCE,
      ]),
    ),
    valid: Type.Integer({ minimum: 0 }),
    invalid: Type.Integer({ minimum: 0 }),
    unreadable: Type.Array(Type.Object({ source: Type.String(), message: Type.String() }, closed)),
  },
  closed,
);

const PATCH_OPERATION = Type.Object(
  {
    op: Type.Union(['add', 'remove', 'replace', 'move', 'copy', 'test'].map((op) => Type.Literal(op))),
    path: Type.String(),
    value: Type.Optional(Type.Unknown()),
    from: Type.Optional(Type.String()),
  },
  closed,
);

const EXPLAIN = Type.Object(
  {
    pods: Type.Array(
      Type.Object(
        {
          source: Type.String(),
          namespace: Type.String(),
          name: Type.String(),
          workload: Type.Object({ kind: Type.String(), name: Type.String() }, closed),
          decision: Type.Union(
            ['mutated', 'unchanged', 'denied', 'skipped', 'rejected'].map((decision) => Type.Literal(decision)),
          ),
          matched: Names,
          applied: Names,
          audited: Type.Array(
            Type.Object(
              { name: Type.String(), operations: Type.Integer(), fields: Names, denial: Type.Optional(Type.String()) },
              closed,
            ),
          ),
          notMatched: Type.Array(
            Type.Object({ rule: Type.String(), dimension: Type.String(), reason: Type.String() }, closed),
          ),
          disabled: Names,
          patch: Type.Array(PATCH_OPERATION),
          warnings: Names,
          placement: Type.Optional(
            Type.Object(
              {
                source: Type.String(),
                name: Type.Optional(Type.String()),
                mode: PLACEMENT_MODE,
                spotPercent: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
                minOnDemand: Type.Optional(Type.Integer({ minimum: 0 })),
                alsoMatched: Names,
              },
              closed,
            ),
          ),
          message: Type.Optional(Type.String()),
        },
        closed,
      ),
    ),
  },
  closed,
);

const COUNT = Type.Integer({ minimum: 0 });
const REPORT = Type.Object(
  {
    rules: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          enforcement: Type.Union([Type.Literal('enforce'), Type.Literal('audit')]),
          matched: COUNT,
          current: COUNT,
          pending: COUNT,
          unschedulable: COUNT,
        },
        closed,
      ),
    ),
    workloads: Type.Array(
      Type.Object(
        {
          namespace: Type.String(),
          kind: Type.String(),
          name: Type.String(),
          pods: COUNT,
          current: COUNT,
          pending: COUNT,
          denied: COUNT,
          rules: Names,
          change: Type.String({ maxLength: 240 }),
          fit: Type.Optional(
            Type.Object(
              {
                kind: Type.Union([Type.Literal('fits'), Type.Literal('nowhere'), Type.Literal('unknown')]),
                reason: Type.String({ minLength: 1, maxLength: 240 }),
              },
              closed,
            ),
          ),
          deletePods: Type.Optional(
            Type.Array(Type.Object({ name: Type.String(), uid: Type.String({ minLength: 1 }) }, closed), {
              minItems: 1,
            }),
          ),
          held: Type.Optional(Type.String({ minLength: 1 })),
        },
        closed,
      ),
    ),
    totals: Type.Object({ pods: COUNT, unaffected: COUNT, current: COUNT, pending: COUNT, denied: COUNT }, closed),
  },
  closed,
);

const ISSUE = Type.Object({ field: Type.String(), reason: Type.String() }, closed);
const TEST = Type.Object(
  {
    files: Type.Array(
      Type.Object(
        {
          file: Type.String(),
          name: Type.String(),
          error: Type.Optional(
            Type.Object({ message: Type.String(), issues: Type.Array(ISSUE, { minItems: 1 }) }, closed),
          ),
          invalidRules: Names,
          cases: Type.Array(
            Type.Object(
              {
                resource: Type.String(),
                source: Type.String(),
                passed: Type.Boolean(),
                failures: Type.Array(
                  Type.Object(
                    {
                      aspect: Type.Union(
                        ['applied', 'audited', 'denied', 'scheduling', 'patchedResource', 'fit', 'placement'].map(
                          (aspect) => Type.Literal(aspect),
                        ),
                      ),
                      summary: Type.String(),
                      expected: Type.Unknown(),
                      actual: Type.Unknown(),
                    },
                    closed,
                  ),
                ),
              },
              closed,
            ),
          ),
          unchecked: Names,
        },
        closed,
      ),
    ),
    passed: COUNT,
    failed: COUNT,
    errors: COUNT,
  },
  closed,
);

const SHAPES: Readonly<Record<string, TSchema>> = { validate: VALIDATE, explain: EXPLAIN, report: REPORT, test: TEST };

/** The schema errors of a value, as path: message, empty when it conforms. */
function violations(schema: TSchema, value: unknown): string[] {
  return [...Value.Errors(schema, value)].map((error) => `${error.path}: ${error.message}`);
}

/** Runs a command with -o json and -o yaml; both must print the same document. */
async function printed(args: readonly string[]): Promise<{ readonly code: number; readonly document: unknown }> {
  const json = await runPodmutationInProcess([...args, '-o', 'json']);
  const yaml = await runPodmutationInProcess([...args, '-o', 'yaml']);
  expect(yaml.code).toBe(json.code);
  const document: unknown = JSON.parse(json.stdout);
  expect(parse(yaml.stdout)).toEqual(document);
  return { code: json.code, document };
}

let cluster: string;

beforeAll(async () => {
  cluster = writeTemporary('shapes-cluster.json', await clusterList());
});

describe('validate -o json', () => {
  it('prints every rule of the examples, valid, in the documented shape', async () => {
    const { code, document } = await printed(['validate', EXAMPLES]);

    expect(code).toBe(0);
    expect(violations(VALIDATE, document)).toEqual([]);
    expect(document).toMatchObject({ valid: 4, invalid: 0 });
  });

  it('prints the PodPlacements of the paths beside the rules, each with its mode and warnings', async () => {
    const disabled = writeTemporary('disabled-placement.yaml', {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodPlacement',
      metadata: { name: 'web-nonspot' },
      spec: { workloadSelector: { kinds: ['Deployment'] }, mode: 'NonSpot' },
    });
    const { code, document } = await printed(['validate', EXAMPLES, EXAMPLE_PODPLACEMENTS, disabled]);

    expect(code).toBe(0);
    expect(violations(VALIDATE, document)).toEqual([]);
    expect(document).toMatchObject({
      placements: [
        { name: 'analytics-diversity', valid: true, enabled: true, priority: 10, mode: 'Diversity', warnings: [] },
        { name: 'batch-to-spot', valid: true, enabled: true, priority: 0, mode: 'Spot', warnings: [] },
        { name: 'web-nonspot', valid: true, enabled: false, mode: 'NonSpot', warnings: [{ field: 'spec.enable' }] },
      ],
      valid: 7,
      invalid: 0,
    });
  });

  it('prints an invalid PodPlacement as an invalid rule is printed, and exits 1', async () => {
    const invalid = writeTemporary('invalid-placement.yaml', {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodPlacement',
      metadata: { name: 'too-much-spot' },
      spec: { enable: true, workloadSelector: { kinds: ['Deployment'] }, mode: 'Diversity', spotPercent: 120 },
    });
    const { code, document } = await printed(['validate', invalid]);

    expect(code).toBe(1);
    expect(violations(VALIDATE, document)).toEqual([]);
    expect(document).toMatchObject({
      rules: [],
      placements: [{ name: 'too-much-spot', valid: false, issues: [{ field: 'spec.spotPercent' }] }],
      valid: 0,
      invalid: 1,
    });
  });

  it('prints an invalid rule with its field paths and reasons, and exits 1', async () => {
    const { code, document } = await printed(['validate', fixturePath('rules/invalid')]);

    expect(code).toBe(1);
    expect(violations(VALIDATE, document)).toEqual([]);
    expect(
      (document as { rules: { name: string; issues?: { field: string }[] }[] }).rules.find(
        (rule) => rule.name === 'force-spot',
      )?.issues?.[0]?.field,
    ).toMatch(/^spec\.mutationAdd\./);
  });
});

describe('explain -o json', () => {
  it('prints each Pod of a List in the documented shape, with the patch admission returns', async () => {
    const { code, document } = await printed(['explain', '--rules', EXAMPLES, fixturePath('pods/pod-list.json')]);

    expect(code).toBe(0);
    expect(violations(EXPLAIN, document)).toEqual([]);
    const [checkout] = (document as { pods: Record<string, unknown>[] }).pods;
    expect(checkout).toMatchObject({
      namespace: 'production',
      workload: { kind: 'Deployment', name: 'checkout' },
      decision: 'mutated',
      matched: ['migrate-legacy-pool'],
      applied: ['migrate-legacy-pool'],
      disabled: ['retire-old-zone-taint'],
    });
    expect(checkout?.notMatched).toContainEqual({
      rule: 'batch-to-spot-pool',
      dimension: 'namespaces',
      reason: 'namespace "production" is not one of batch, analytics',
    });
  });

  it('prints the placement of each Pod: its source, its terms, and the other PodPlacements that selected it', async () => {
    const { code, document } = await printed([
      'explain',
      '--rules',
      EXAMPLES,
      '--rules',
      EXAMPLE_PODPLACEMENTS,
      '--placements',
      fileURLToPath(new URL('../../examples/placements.yaml', import.meta.url)),
      fileURLToPath(new URL('../../examples/tests/podplacements/resources/workloads.yaml', import.meta.url)),
    ]);

    expect(code).toBe(0);
    expect(violations(EXPLAIN, document)).toEqual([]);
    expect((document as { pods: { placement?: unknown }[] }).pods.map((pod) => pod.placement)).toEqual([
      { source: 'PodPlacement "batch-to-spot"', name: 'batch-to-spot', mode: 'Spot', alsoMatched: [] },
      { source: 'placement policy batch/CronJob/nightly-report', mode: 'Spot', alsoMatched: ['batch-to-spot'] },
      {
        source: 'PodPlacement "analytics-diversity"',
        name: 'analytics-diversity',
        mode: 'Diversity',
        spotPercent: 70,
        minOnDemand: 2,
        alsoMatched: [],
      },
      undefined,
    ]);
  });

  it('prints a denial with its message and exits 1', async () => {
    const { code, document } = await printed(['explain', ...rulePaths().flatMap((path) => ['--rules', path]), cluster]);

    expect(violations(EXPLAIN, document)).toEqual([]);
    const denied = (document as { pods: { decision: string; message?: string }[] }).pods.filter(
      (pod) => pod.decision === 'denied',
    );
    expect(denied.length).toBeGreaterThan(0);
    expect(denied[0]?.message).toMatch(
      /^PodMutation "fan-out-zones": required node selector terms after combining would be \d+, above the limit of 64$/,
    );
    expect(code).toBe(1);
  });

  it('prints a Pod the input contract rejects with the field path, explains the others, and exits 2', async () => {
    const list = JSON.parse(readFileSync(fixturePath('pods/pod-list.json'), 'utf8')) as {
      items: { spec: Record<string, unknown> }[];
    };
    list.items[1]!.spec.tolerations = 'none';
    const { code, document } = await printed(['explain', '--rules', EXAMPLES, writeTemporary('rejected.json', list)]);

    expect(code).toBe(2);
    expect(violations(EXPLAIN, document)).toEqual([]);
    expect((document as { pods: { decision: string; message?: string }[] }).pods.map((pod) => pod.decision)).toEqual([
      'mutated',
      'rejected',
    ]);
    expect((document as { pods: { message?: string }[] }).pods[1]?.message).toContain(
      'spec.tolerations: expected a list',
    );
  });
});

describe('validate -o json, with a warning', () => {
  it('prints the warning of a valid rule in the documented shape, and exits 0', async () => {
    const rule = {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'every-pod' },
      spec: {
        enable: true,
        workloadSelector: { tolerationsMatch: [{ operator: 'Exists' }] },
        mutationAdd: { nodeSelector: { 'example.com/pool': 'merged' } },
      },
    };
    const { code, document } = await printed(['validate', writeTemporary('every-pod.json', rule)]);

    expect(code).toBe(0);
    expect(violations(VALIDATE, document)).toEqual([]);
    expect(
      (document as { rules: { warnings: { field: string }[] }[] }).rules[0]?.warnings.map((warning) => warning.field),
    ).toEqual(['spec.workloadSelector.tolerationsMatch[0]']);
  });
});

describe('report -o json', () => {
  it('prints the documented shape', async () => {
    const { document } = await printed([
      'report',
      '--objects',
      cluster,
      ...rulePaths().flatMap((path) => ['--rules', path]),
    ]);

    expect(violations(REPORT, document)).toEqual([]);
  });

  it('prints the Pods to delete of an OnDelete StatefulSet in the documented shape', async () => {
    const list = ledgerWith(await clusterList(), { type: 'OnDelete' });
    const { document } = await printed([
      'report',
      '--objects',
      writeTemporary('on-delete.json', list),
      '--rules',
      writeTemporary('move-ledger.json', MOVE_LEDGER),
    ]);

    expect(violations(REPORT, document)).toEqual([]);
    expect(
      (document as { workloads: { deletePods?: { name: string }[] }[] }).workloads[0]?.deletePods?.map(
        ({ name }) => name,
      ),
    ).toEqual(['ledger-1', 'ledger-0']);
  });

  it('prints a held StatefulSet in the documented shape: the reason, and no Pods to delete', async () => {
    const list = ledgerWith(await clusterList(), { type: 'OnDelete' }, { updateRevision: 'ledger-5b9d8c7f4' });
    const { document } = await printed([
      'report',
      '--objects',
      writeTemporary('staged.json', list),
      '--rules',
      writeTemporary('move-ledger.json', MOVE_LEDGER),
    ]);

    expect(violations(REPORT, document)).toEqual([]);
    expect((document as { workloads: { held?: string }[] }).workloads[0]?.held).toMatch(/^its template is staged/);
  });
});

describe('test -o json', () => {
  it('prints every result of the examples, passed, in the documented shape', async () => {
    const { code, document } = await printed(['test', fileURLToPath(new URL('../../examples/tests', import.meta.url))]);

    expect(code).toBe(0);
    expect(violations(TEST, document)).toEqual([]);
    expect(document).toMatchObject({ failed: 0, errors: 0 });
  });

  it('prints a failed result with each expectation, a file that cannot be run with its issues, and exits 2', async () => {
    const { code, document } = await printed([
      'test',
      fixturePath('rule-tests/wrong-scheduling'),
      fixturePath('rule-tests/malformed'),
    ]);

    expect(code).toBe(2);
    expect(violations(TEST, document)).toEqual([]);
    const [failing, malformed] = (
      document as { files: { cases: { failures: { aspect: string }[] }[]; error?: unknown }[] }
    ).files;
    expect(failing?.cases[0]?.failures.map((failure) => failure.aspect)).toEqual(['scheduling']);
    expect(malformed?.error).toBeDefined();
  });
});

describe("the docs' JSON examples", () => {
  const docs = ['cli.md', 'operations.md']
    .map((name) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8'))
    .join('\n');
  const examples = [...docs.matchAll(/<!-- shape: (\w+) -->\n```json\n([\s\S]*?)\n```/g)].map(
    (match) => [match[1]!, match[2]!] as const,
  );

  it('exist for validate, explain, test and report', () => {
    expect(examples.map(([name]) => name).sort()).toEqual(['explain', 'report', 'test', 'validate']);
  });

  it.each(examples)('of %s conform to the shape the command prints', (name, text) => {
    expect(violations(SHAPES[name]!, JSON.parse(text))).toEqual([]);
  });
});
