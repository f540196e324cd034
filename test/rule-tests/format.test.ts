/**
 * The PodMutationTest file's reader: every wrong field at once, with its path, so that a typo can
 * never make a case pass vacuously; defaults for what a file leaves out; paths relative to the file.
 */
import { describe, expect, it } from 'vitest';
import { MalformedInputError } from '../../lib/errors/index.ts';

import { TEST_API_VERSION, TEST_KIND, readRuleTest } from '../../lib/rule-tests/format.ts';

const FILE = 'tests/checkout/podmutation-test.yaml';

function testFile(
  overrides: Record<string, unknown> = {},
  result: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: TEST_API_VERSION,
    kind: TEST_KIND,
    metadata: { name: 'checkout' },
    rules: ['../rules'],
    resources: ['resources/checkout.yaml'],
    results: [{ resource: 'Deployment/production/checkout', applied: ['migrate-legacy-pool'], ...result }],
    ...overrides,
  };
}

/** The issues the reader reports for a document, as "field: reason". */
function issuesOf(document: unknown): string[] {
  try {
    readRuleTest(document, FILE);
  } catch (error) {
    if (!(error instanceof MalformedInputError)) throw error;
    return (error.context.issues as { field: string; reason: string }[]).map(({ field, reason }) =>
      field === '' ? reason : `${field}: ${reason}`,
    );
  }
  return [];
}

describe('readRuleTest', () => {
  it('reads a minimal file with the defaults: enforce, namespace default, karpenter, nothing audited or denied', () => {
    const test = readRuleTest(testFile(), FILE);

    expect(test).toEqual({
      file: FILE,
      name: 'checkout',
      rules: ['tests/rules'],
      placements: undefined,
      capacityFlavour: 'karpenter',
      capacity: undefined,
      enforcement: 'enforce',
      namespace: 'default',
      resources: ['tests/checkout/resources/checkout.yaml'],
      results: [
        {
          path: 'results[0]',
          resource: {
            kind: 'Deployment',
            namespace: 'production',
            name: 'checkout',
            text: 'Deployment/production/checkout',
          },
          applied: ['migrate-legacy-pool'],
          audited: [],
          denied: false,
          scheduling: undefined,
          patchedResource: undefined,
          fit: undefined,
          fitMessage: undefined,
        },
      ],
    });
  });

  it('resolves paths beside the file, and keeps absolute ones', () => {
    const test = readRuleTest(
      testFile(
        {
          rules: ['/srv/rules', 'local.yaml'],
          placements: '../placements.yaml',
          capacityFlavour: 'gke',
          capacity: ['../nodes.yaml', '/srv/nodepools.yaml'],
        },
        { patchedResource: 'expected/checkout.yaml' },
      ),
      FILE,
    );

    expect(test.rules).toEqual(['/srv/rules', 'tests/checkout/local.yaml']);
    expect(test.placements).toBe('tests/placements.yaml');
    expect(test.capacityFlavour).toBe('gke');
    expect(test.capacity).toEqual(['tests/nodes.yaml', '/srv/nodepools.yaml']);
    expect(test.results[0]!.patchedResource).toBe('tests/checkout/expected/checkout.yaml');
  });

  it.each([
    ['KIND/NAME, any namespace', 'Pod/web-0', { kind: 'Pod', namespace: undefined, name: 'web-0' }],
    ['KIND/NAMESPACE/NAME', 'CronJob/batch/nightly', { kind: 'CronJob', namespace: 'batch', name: 'nightly' }],
  ])('reads a resource named as %s', (_, text, reference) => {
    expect(readRuleTest(testFile({}, { resource: text }), FILE).results[0]!.resource).toEqual({ ...reference, text });
  });

  it.each([true, false, 'above the limit of 64'])('reads denied: %j', (denied) => {
    expect(readRuleTest(testFile({}, { denied, applied: [] }), FILE).results[0]!.denied).toBe(denied);
  });

  it.each(['fits', 'nowhere', 'unknown'])('reads fit: %s', (fit) => {
    expect(readRuleTest(testFile({}, { fit, fitMessage: 'NodePool' }), FILE).results[0]).toMatchObject({
      fit,
      fitMessage: 'NodePool',
    });
  });

  it.each<[string, unknown, string[]]>([
    ['a document that is not an object', ['results'], ['must be an object']],
    ['another kind', testFile({ kind: 'KyvernoTest' }), [`kind: must be one of ${TEST_KIND} (got "KyvernoTest")`]],
    [
      'an unknown top-level field',
      testFile({ resource: ['x.yaml'] }),
      [
        'resource: unknown field; expected one of apiVersion, kind, metadata, rules, placements, capacityFlavour, capacity, enforcement, namespace, resources, results',
      ],
    ],
    [
      'a misspelt result field, and the field it hid missing',
      testFile({ results: [{ resource: 'Pod/web', aplied: [] }] }),
      [
        'results[0].aplied: unknown field; expected one of resource, applied, audited, denied, scheduling, patchedResource, fit, fitMessage, placement',
        'results[0].applied: is required',
      ],
    ],
    [
      'a misspelt scheduling field deep down',
      testFile(
        {},
        {
          scheduling: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpresions: [] }] },
              },
            },
          },
        },
      ),
      [
        'results[0].scheduling.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpresions: unknown field; expected one of matchExpressions, matchFields',
      ],
    ],
    [
      'a scheduling field admission never sets',
      testFile({}, { scheduling: { affinity: { podAntiAffinity: {} } } }),
      ['results[0].scheduling.affinity.podAntiAffinity: unknown field; expected one of nodeAffinity'],
    ],
    ['rules as one path instead of a list', testFile({ rules: '../rules' }), ['rules: must be a list of paths']],
    ['no rules', testFile({ rules: [] }), ['rules: must name at least one rule path']],
    ['no results', testFile({ results: [] }), ['results: must hold at least one result']],
    ['an empty path', testFile({ resources: [''] }), ['resources[0]: must not be empty']],
    [
      'applied as a string',
      testFile({}, { applied: 'migrate-legacy-pool' }),
      ['results[0].applied: must be a list of strings'],
    ],
    [
      'denied as a list',
      testFile({}, { denied: ['yes'] }),
      ['results[0].denied: must be true, false or a part of the denial message'],
    ],
    [
      'denied as an empty message',
      testFile({}, { denied: '' }),
      ['results[0].denied: must not be empty: true expects any denial'],
    ],
    [
      'a denial and a scheduling expectation together',
      testFile({}, { denied: true, scheduling: {} }),
      [
        'results[0]: a denied Pod is not admitted: expect its denial, or its scheduling, patched resource and fit, not both',
      ],
    ],
    [
      'a denial and a fit expectation together',
      testFile({}, { denied: true, fit: 'nowhere' }),
      [
        'results[0]: a denied Pod is not admitted: expect its denial, or its scheduling, patched resource and fit, not both',
      ],
    ],
    [
      'a fit that is not a verdict kind',
      testFile({}, { fit: 'fit' }),
      ['results[0].fit: must be one of fits, nowhere, unknown (got "fit")'],
    ],
    ['an empty fit message', testFile({}, { fitMessage: '' }), ['results[0].fitMessage: must not be empty']],
    [
      'capacity as one path instead of a list',
      testFile({ capacity: 'nodes.yaml' }),
      ['capacity: must be a list of paths'],
    ],
    ['an empty capacity path', testFile({ capacity: [''] }), ['capacity[0]: must not be empty']],
    [
      'a resource that is not KIND/NAME',
      testFile({}, { resource: 'checkout' }),
      ['results[0].resource: must be KIND/NAME or KIND/NAMESPACE/NAME (got "checkout")'],
    ],
    [
      'a resource with an empty part',
      testFile({}, { resource: 'Deployment//checkout' }),
      ['results[0].resource: must be KIND/NAME or KIND/NAMESPACE/NAME (got "Deployment//checkout")'],
    ],
    [
      'an unknown operator',
      testFile({}, { scheduling: { tolerations: [{ key: 'a', operator: 'Exist' }] } }),
      ['results[0].scheduling.tolerations[0].operator: must be one of Equal, Exists (got "Exist")'],
    ],
    [
      'a toleration with a null value',
      testFile({}, { scheduling: { tolerations: [{ key: 'a', value: null }] } }),
      ['results[0].scheduling.tolerations[0].value: must be a string'],
    ],
    [
      'a product annotation in the expected annotations',
      testFile({}, { scheduling: { annotations: { 'podmutation.agent.cloudpilot.ai/applied': 'x' } } }),
      [
        'results[0].scheduling.annotations["podmutation.agent.cloudpilot.ai/applied"]: is the product\'s own: applied and audited check the podmutation.agent.cloudpilot.ai/ annotations',
      ],
    ],
    [
      'a placement expectation that is no placement',
      testFile({}, { placement: 'batch-to-spot' }),
      ['results[0].placement: must be none, policy (a placement policy) or PodPlacement/NAME (got "batch-to-spot")'],
    ],
    [
      'a placement expectation naming no valid PodPlacement name',
      testFile({}, { placement: 'PodPlacement/Batch_To_Spot' }),
      [
        'results[0].placement: must be none, policy (a placement policy) or PodPlacement/NAME (got "PodPlacement/Batch_To_Spot")',
      ],
    ],
    [
      'an unknown enforcement',
      testFile({ enforcement: 'Audit' }),
      ['enforcement: must be one of enforce, audit (got "Audit")'],
    ],
    [
      'a namespace that is no namespace name',
      testFile({ namespace: 'Shop' }),
      ['namespace: must be a namespace name (DNS-1123 label), got "Shop"'],
    ],
  ])('rejects %s, naming the field', (_, document, issues) => {
    expect(issuesOf(document)).toEqual(issues);
  });

  it('reports every wrong field of a file in one error that names the file', () => {
    const document = testFile({ enforcement: 'strict', extra: 1 }, { audited: 'x' });

    expect(() => readRuleTest(document, FILE)).toThrow(
      `${FILE}: extra: unknown field; expected one of apiVersion, kind, metadata, rules, placements, capacityFlavour, capacity, enforcement, namespace, resources, results; ` +
        'enforcement: must be one of enforce, audit (got "strict"); results[0].audited: must be a list of strings',
    );
  });
});
