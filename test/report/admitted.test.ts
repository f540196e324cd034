/**
 * lib/report/admitted.ts, the model of the mutating admission plugins that run before the webhook: each plugin's cases
 * (the Kubernetes tests' own where there are some: pkg/util/tolerations/tolerations_test.go,
 * plugin/pkg/admission/extendedresourcetoleration/admission_test.go, plugin/pkg/admission/runtimeclass/admission_test.go),
 * the inputs read from the running Pod, and the laws the API server relies on when it runs them a second time.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { podFacts, type Pod } from '../../lib/engine/index.ts';
import {
  admissionInputs,
  asAdmitted,
  extendedResourcesOf,
  isExtendedResourceName,
  isSuperset,
  mergeTolerations,
  type AdmissionInputs,
} from '../../lib/report/admitted.ts';
import { readRuntimeClass, type RuntimeClassScheduling } from '../../lib/report/runtime-class.ts';
import type { Toleration } from '../../lib/scheduling/index.ts';

// pkg/util/tolerations/tolerations_test.go's tolerations, by the test's names.
const T: Readonly<Record<string, Toleration>> = {
  all: { operator: 'Exists' },
  'all-nosched': { operator: 'Exists', effect: 'NoSchedule' },
  'all-noexec': { operator: 'Exists', effect: 'NoExecute' },
  foo: { key: 'foo', operator: 'Exists' },
  'foo-bar': { key: 'foo', operator: 'Equal', value: 'bar' },
  'foo-nosched': { key: 'foo', operator: 'Exists', effect: 'NoSchedule' },
  'foo-bar-nosched': { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' },
  'foo-baz-nosched': { key: 'foo', operator: 'Equal', value: 'baz', effect: 'NoSchedule' },
  'faz-nosched': { key: 'faz', operator: 'Exists', effect: 'NoSchedule' },
  'faz-baz-nosched': { key: 'faz', operator: 'Equal', value: 'baz', effect: 'NoSchedule' },
  'foo-prefnosched': { key: 'foo', operator: 'Exists', effect: 'PreferNoSchedule' },
  'foo-noexec': { key: 'foo', operator: 'Exists', effect: 'NoExecute' },
  'foo-bar-noexec': { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoExecute' },
  'foo-noexec-10': { key: 'foo', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 },
  'foo-noexec-0': { key: 'foo', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
  'foo-bar-noexec-10': { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoExecute', tolerationSeconds: 10 },
};
const named = (...names: string[]): Toleration[] => names.map((name) => T[name]!);

const NOT_READY = {
  key: 'node.kubernetes.io/not-ready',
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
};
const UNREACHABLE = {
  key: 'node.kubernetes.io/unreachable',
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
};
const MEMORY_PRESSURE = { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' };
const GPU = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' };

const NONE: AdmissionInputs = {
  namespaceNodeSelector: {},
  defaultTolerations: [],
  namespaceTolerations: [],
  extendedResources: [],
  runtimeClasses: new Map(),
};

function pod(spec: Record<string, unknown>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'web-', namespace: 'team' },
    spec: { containers: [{ name: 'app', image: 'app:1' }], ...spec },
  };
}

function runtimeClass(name: string, scheduling?: Record<string, unknown>): RuntimeClassScheduling {
  return readRuntimeClass(
    {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name },
      handler: 'runsc',
      ...(scheduling === undefined ? {} : { scheduling }),
    },
    name,
  );
}

function classes(...items: RuntimeClassScheduling[]): ReadonlyMap<string, RuntimeClassScheduling> {
  return new Map(items.map((item) => [item.name, item]));
}

/** The scheduling fields of the admitted Pod, and the refusal's plugin when one refused it. */
function admitted(spec: Record<string, unknown>, inputs: Partial<AdmissionInputs>) {
  const result = asAdmitted(pod(spec), { ...NONE, ...inputs }, 'pod');
  return {
    nodeSelector: result.pod.spec?.nodeSelector,
    tolerations: result.pod.spec?.tolerations,
    ...(result.refusal === undefined ? {} : { refusedBy: result.refusal.plugin }),
  };
}

describe('tolerations merged as pkg/util/tolerations merges them', () => {
  // tolerations_test.go TestIsSuperset: each toleration covers itself and the listed ones, and no other.
  it.each([
    ['all', Object.keys(T).filter((name) => name !== 'all')],
    ['all-nosched', ['foo-nosched', 'foo-bar-nosched', 'foo-baz-nosched', 'faz-nosched', 'faz-baz-nosched']],
    ['all-noexec', ['foo-noexec', 'foo-bar-noexec', 'foo-noexec-10', 'foo-noexec-0', 'foo-bar-noexec-10']],
    [
      'foo',
      [
        'foo-bar',
        'foo-nosched',
        'foo-bar-nosched',
        'foo-baz-nosched',
        'foo-prefnosched',
        'foo-noexec',
        'foo-bar-noexec',
        'foo-noexec-10',
        'foo-noexec-0',
        'foo-bar-noexec-10',
      ],
    ],
    ['foo-bar', ['foo-bar-nosched', 'foo-bar-noexec', 'foo-bar-noexec-10']],
    ['foo-nosched', ['foo-bar-nosched', 'foo-baz-nosched']],
    ['foo-bar-nosched', []],
    ['faz-nosched', ['faz-baz-nosched']],
    ['faz-baz-nosched', []],
    ['foo-noexec', ['foo-bar-noexec', 'foo-noexec-10', 'foo-noexec-0', 'foo-bar-noexec-10']],
    ['foo-bar-noexec', ['foo-bar-noexec-10']],
    ['foo-noexec-10', ['foo-noexec-0', 'foo-bar-noexec-10']],
    ['foo-noexec-0', []],
    ['foo-bar-noexec-10', []],
  ])('%s covers itself and %j, and no other toleration of the test', (superset, covered) => {
    const covers = Object.keys(T).filter((name) => isSuperset(T[superset]!, T[name]!));

    expect(covers.sort()).toEqual([superset, ...covered].sort());
  });

  // tolerations_test.go TestMergeTolerations.
  it.each([
    [
      'disjoint',
      ['foo-bar-nosched', 'faz-baz-nosched', 'foo-noexec-10'],
      ['foo-prefnosched', 'foo-baz-nosched'],
      ['foo-bar-nosched', 'faz-baz-nosched', 'foo-noexec-10', 'foo-prefnosched', 'foo-baz-nosched'],
    ],
    [
      'duplicate',
      ['foo-bar-nosched', 'faz-baz-nosched', 'foo-noexec-10'],
      ['foo-bar-nosched', 'faz-baz-nosched', 'foo-noexec-10'],
      ['foo-bar-nosched', 'faz-baz-nosched', 'foo-noexec-10'],
    ],
    [
      'merge redundant',
      ['foo-bar-nosched', 'foo-baz-nosched'],
      ['foo-nosched', 'faz-baz-nosched'],
      ['foo-nosched', 'faz-baz-nosched'],
    ],
    ['merge all', ['foo-bar-nosched', 'foo-baz-nosched', 'foo-noexec-10'], ['all'], ['all']],
    ['merge into all', ['all'], ['foo-bar-nosched', 'foo-baz-nosched', 'foo-noexec-10'], ['all']],
  ])('merges %s as Kubernetes does', (_name, first, second, expected) => {
    expect(mergeTolerations(named(...first), named(...second))).toEqual(named(...expected));
  });

  const toleration: fc.Arbitrary<Toleration> = fc.oneof(
    { weight: 1, arbitrary: fc.constant(T.all!) },
    {
      weight: 30,
      arbitrary: fc
        .record({
          key: fc.constantFrom('a', 'aa', 'aaa'),
          exists: fc.boolean(),
          value: fc.constantFrom('b', 'bb'),
          effect: fc.constantFrom('', 'NoExecute', 'NoSchedule', 'PreferNoSchedule'),
          seconds: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }),
        })
        .map(({ key, exists, value, effect, seconds }) => ({
          key,
          operator: exists ? 'Exists' : 'Equal',
          ...(exists ? {} : { value }),
          ...(effect === '' ? {} : { effect }),
          ...(effect === 'NoExecute' && seconds !== undefined ? { tolerationSeconds: seconds } : {}),
        })),
    },
  );
  const list = fc.array(toleration, { maxLength: 9 });

  // tolerations_test.go TestFuzzed "MergeTolerations".
  it('keeps, for every toleration of either list, one that covers it', () => {
    fc.assert(
      fc.property(list, list, (first, second) => {
        const merged = mergeTolerations(first, second);
        for (const item of [...first, ...second]) expect(merged.some((kept) => isSuperset(kept, item))).toBe(true);
      }),
    );
  });

  it('changes nothing when merging a list into its own merge again', () => {
    fc.assert(
      fc.property(list, list, (first, second) => {
        const merged = mergeTolerations(first, second);
        expect(mergeTolerations(merged, second)).toEqual(merged);
      }),
    );
  });
});

describe('PodNodeSelector: the namespace node selector', () => {
  it.each([
    ['adds the keys the Pod has not', { app: 'web' }, { pool: 'merged' }, { app: 'web', pool: 'merged' }],
    ['leaves a key of the same value', { pool: 'merged' }, { pool: 'merged' }, { pool: 'merged' }],
    ['gives a Pod without a selector the namespace one', undefined, { pool: 'merged' }, { pool: 'merged' }],
    ['leaves the Pod alone when the namespace has none', { app: 'web' }, {}, { app: 'web' }],
  ])('%s', (_case, own, namespace, expected) => {
    expect(admitted(own === undefined ? {} : { nodeSelector: own }, { namespaceNodeSelector: namespace })).toEqual({
      nodeSelector: expected,
      tolerations: undefined,
    });
  });

  it('refuses a Pod whose selector gives one of the namespace keys another value, leaving it as it was', () => {
    const result = asAdmitted(
      pod({ nodeSelector: { pool: 'gpu' } }),
      { ...NONE, namespaceNodeSelector: { pool: 'merged' } },
      'pod',
    );

    expect(result.pod.spec?.nodeSelector).toEqual({ pool: 'gpu' });
    expect(result.refusal?.plugin).toBe('PodNodeSelector');
    expect(result.refusal?.message).toContain('pool=merged');
  });
});

describe('DefaultTolerationSeconds: the not-ready and unreachable tolerations', () => {
  it.each([
    ['adds both to a Pod that tolerates neither', [], [NOT_READY, UNREACHABLE]],
    [
      'adds only unreachable to a Pod tolerating not-ready itself',
      [{ ...NOT_READY, tolerationSeconds: 30 }],
      [{ ...NOT_READY, tolerationSeconds: 30 }, UNREACHABLE],
    ],
    ['adds none to a Pod tolerating every key for NoExecute', [T['all-noexec']!], [T['all-noexec']!]],
    ['adds none to a Pod tolerating every taint', [T.all!], [T.all!]],
    [
      'adds both to a Pod tolerating every key for NoSchedule only',
      [T['all-nosched']!],
      [T['all-nosched']!, NOT_READY, UNREACHABLE],
    ],
  ])('%s', (_case, own, expected) => {
    expect(admitted({ tolerations: own }, { defaultTolerations: [NOT_READY, UNREACHABLE] }).tolerations).toEqual(
      expected,
    );
  });

  it('adds the cluster’s seconds, as the running Pod shows them', () => {
    const configured = [{ ...NOT_READY, tolerationSeconds: 60 }];

    expect(admitted({}, { defaultTolerations: configured }).tolerations).toEqual(configured);
  });
});

describe('PodTolerationRestriction: the namespace default tolerations', () => {
  it.each([
    ['appends them', named('foo-bar-nosched'), named('faz-baz-nosched'), named('foo-bar-nosched', 'faz-baz-nosched')],
    [
      'drops the Pod’s own that one covers',
      named('foo-bar-nosched', 'foo-baz-nosched'),
      named('foo-nosched'),
      named('foo-nosched'),
    ],
    ['drops the ones the Pod’s own cover', named('foo'), named('foo-bar-nosched', 'foo-noexec'), named('foo')],
    [
      'leaves a Pod alone when there are none',
      named('foo-bar-nosched', 'foo-bar-nosched'),
      [],
      named('foo-bar-nosched', 'foo-bar-nosched'),
    ],
  ])('%s', (_case, own, namespace, expected) => {
    expect(admitted({ tolerations: own }, { namespaceTolerations: namespace }).tolerations).toEqual(expected);
  });
});

describe('ExtendedResourceToleration: a toleration per extended resource requested', () => {
  const cpu = { name: 'cpu', image: 'a', resources: { requests: { cpu: '2' } } };
  const memory = { name: 'memory', image: 'a', resources: { requests: { memory: '2048' } } };
  const ek = { name: 'ek', image: 'a', resources: { requests: { 'example.com/device-ek': '1' } } };
  const doo = { name: 'do', image: 'a', resources: { requests: { 'example.com/device-do': '2' } } };
  const ekTol = { key: 'example.com/device-ek', operator: 'Exists', effect: 'NoSchedule' };
  const doTol = { key: 'example.com/device-do', operator: 'Exists', effect: 'NoSchedule' };
  const fooBar = { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' };

  // extendedresourcetoleration/admission_test.go TestAdmit.
  it.each([
    ['no change for a Pod without containers', {}, undefined],
    ['no change for a container without extended resources', { containers: [cpu] }, undefined],
    [
      'no change for an init container without extended resources',
      { containers: [], initContainers: [memory] },
      undefined,
    ],
    ['one for a container’s extended resource', { containers: [ek] }, [ekTol]],
    ['one for an init container’s extended resource', { containers: [], initContainers: [doo] }, [doTol]],
    ['one beside the Pod’s own tolerations', { containers: [cpu, ek], tolerations: [fooBar] }, [fooBar, ekTol]],
    ['one per resource, sorted by key', { containers: [memory, ek], initContainers: [cpu, doo] }, [doTol, ekTol]],
    ['none more when the Pod has it', { containers: [cpu, memory, ek], tolerations: [ekTol] }, [ekTol]],
    [
      'one beside a toleration of the key with another effect and value',
      {
        containers: [ek],
        tolerations: [{ key: 'example.com/device-ek', operator: 'Equal', value: 'foo', effect: 'NoExecute' }],
      },
      [{ key: 'example.com/device-ek', operator: 'Equal', value: 'foo', effect: 'NoExecute' }, ekTol],
    ],
  ])('%s', (_case, spec, expected) => {
    const candidate = pod(spec);

    const result = asAdmitted(candidate, { ...NONE, extendedResources: extendedResourcesOf(candidate, 'pod') }, 'pod');

    expect(result.pod.spec?.tolerations).toEqual(expected);
  });

  it('counts a limit as a request: the API server defaults a Pod’s requests to its limits before admission', () => {
    expect(
      extendedResourcesOf(
        pod({ containers: [{ name: 'a', resources: { limits: { 'nvidia.com/gpu': '1' } } }] }),
        'pod',
      ),
    ).toEqual(['nvidia.com/gpu']);
  });

  it.each([
    ['nvidia.com/gpu', true],
    ['example.com/device-ek', true],
    ['cpu', false],
    ['hugepages-2Mi', false],
    ['ephemeral-storage', false],
    ['kubernetes.io/batch-cpu', false],
    ['node.kubernetes.io/thing', false],
    ['requests.example.com/device', false],
    ['example.com/', false],
    ['Example.com/device', false],
  ])('reads %s as extended: %s (pkg/apis/core/helper IsExtendedResourceName)', (name, extended) => {
    expect(isExtendedResourceName(name)).toBe(extended);
  });

  it('names the field of a container whose resources are not an object', () => {
    expect(() => extendedResourcesOf(pod({ containers: [{ name: 'a', resources: [] }] }), 'pod')).toThrow(
      'pod.spec.containers[0].resources: expected an object, got a list',
    );
  });
});

describe('RuntimeClass: the scheduling of the RuntimeClass the Pod names', () => {
  const fooBar = { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' };
  const fizzBuzz = { key: 'fizz', operator: 'Equal', value: 'buzz', effect: 'NoSchedule' };

  // runtimeclass/admission_test.go TestSetScheduling.
  it.each([
    ['no change without scheduling', undefined, { foo: 'bar' }, [], { nodeSelector: { foo: 'bar' }, tolerations: [] }],
    [
      'the selector to a Pod without one',
      { nodeSelector: { foo: 'bar' } },
      undefined,
      undefined,
      { nodeSelector: { foo: 'bar' }, tolerations: undefined },
    ],
    [
      'no change for the same key and value',
      { nodeSelector: { foo: 'bar' } },
      { foo: 'bar' },
      undefined,
      { nodeSelector: { foo: 'bar' }, tolerations: undefined },
    ],
    [
      'the other keys',
      { nodeSelector: { foo: 'bar', fizz: 'buzz' } },
      { foo: 'bar' },
      undefined,
      { nodeSelector: { foo: 'bar', fizz: 'buzz' }, tolerations: undefined },
    ],
    [
      'the tolerations, merged',
      { tolerations: [fooBar, fizzBuzz] },
      { foo: 'bar' },
      [fooBar],
      { nodeSelector: { foo: 'bar' }, tolerations: [fooBar, fizzBuzz] },
    ],
  ])('adds %s', (_case, scheduling, nodeSelector, tolerations, expected) => {
    const spec = {
      runtimeClassName: 'foo',
      ...(nodeSelector === undefined ? {} : { nodeSelector }),
      ...(tolerations === undefined ? {} : { tolerations }),
    };

    expect(admitted(spec, { runtimeClasses: classes(runtimeClass('foo', scheduling)) })).toEqual(expected);
  });

  it('refuses a Pod whose selector conflicts with the RuntimeClass’s, with the plugin’s message', () => {
    const result = asAdmitted(
      pod({ runtimeClassName: 'foo', nodeSelector: { foo: 'bar' } }),
      { ...NONE, runtimeClasses: classes(runtimeClass('foo', { nodeSelector: { foo: 'conflict' } })) },
      'pod',
    );

    expect(result.refusal).toEqual({
      plugin: 'RuntimeClass',
      message: 'conflict: runtimeClass.scheduling.nodeSelector[foo] = conflict; pod.spec.nodeSelector[foo] = bar',
    });
  });

  it('leaves a Pod alone whose RuntimeClass the report did not read, or that names none', () => {
    const known = classes(runtimeClass('gvisor', { nodeSelector: { sandbox: 'gvisor' } }));

    expect(admitted({ runtimeClassName: 'kata' }, { runtimeClasses: known }).nodeSelector).toBeUndefined();
    expect(admitted({}, { runtimeClasses: known }).nodeSelector).toBeUndefined();
  });

  it('names the field of a RuntimeClass that is not well formed', () => {
    expect(() =>
      readRuntimeClass(
        { kind: 'RuntimeClass', metadata: { name: 'x' }, scheduling: { tolerations: [{ key: 1 }] } },
        'items[0]',
      ),
    ).toThrow('items[0].scheduling.tolerations[0].key: expected a string, got a number');
  });
});

describe('the plugins in the API server’s order', () => {
  it('lets a RuntimeClass that tolerates every taint drop what the earlier plugins added', () => {
    const everything = classes(runtimeClass('all', { tolerations: [T.all] }));

    const result = admitted(
      { runtimeClassName: 'all', containers: [{ name: 'a', resources: { limits: { 'nvidia.com/gpu': '1' } } }] },
      {
        defaultTolerations: [NOT_READY, UNREACHABLE],
        namespaceTolerations: [MEMORY_PRESSURE],
        extendedResources: ['nvidia.com/gpu'],
        runtimeClasses: everything,
      },
    );

    expect(result.tolerations).toEqual([T.all]);
  });

  it('adds the defaults, then the namespace’s, then the extended resources’, then the RuntimeClass’s', () => {
    const sandbox = { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' };

    const result = admitted(
      { runtimeClassName: 'gvisor' },
      {
        namespaceNodeSelector: { pool: 'merged' },
        defaultTolerations: [NOT_READY, UNREACHABLE],
        namespaceTolerations: [MEMORY_PRESSURE],
        extendedResources: ['nvidia.com/gpu'],
        runtimeClasses: classes(
          runtimeClass('gvisor', { nodeSelector: { sandbox: 'gvisor' }, tolerations: [sandbox] }),
        ),
      },
    );

    expect(result).toEqual({
      nodeSelector: { pool: 'merged', sandbox: 'gvisor' },
      tolerations: [NOT_READY, UNREACHABLE, MEMORY_PRESSURE, GPU, sandbox],
    });
  });

  it('returns the Pod itself when no plugin changes it', () => {
    const candidate = pod({ tolerations: [NOT_READY, UNREACHABLE] });

    expect(asAdmitted(candidate, { ...NONE, defaultTolerations: [NOT_READY] }, 'pod').pod).toBe(candidate);
  });

  const inputs: fc.Arbitrary<AdmissionInputs> = fc.record({
    namespaceNodeSelector: fc.dictionary(fc.constantFrom('pool', 'zone'), fc.constantFrom('a', 'b')),
    defaultTolerations: fc.subarray([NOT_READY, UNREACHABLE]),
    namespaceTolerations: fc.subarray(named('foo', 'foo-bar-nosched', 'faz-nosched', 'all-noexec')),
    extendedResources: fc.subarray(['example.com/a', 'nvidia.com/gpu']),
    runtimeClasses: fc
      .subarray(named('foo-nosched', 'faz-baz-nosched', 'all'))
      .map((tolerations) => classes(runtimeClass('rc', { nodeSelector: { sandbox: 'yes' }, tolerations }))),
  });
  const spec = fc.record({
    nodeSelector: fc.dictionary(fc.constantFrom('pool', 'app'), fc.constantFrom('a', 'b')),
    tolerations: fc.subarray(Object.values(T)),
    runtimeClassName: fc.constantFrom('rc', ''),
  });

  it('changes nothing more when run again on a Pod it admitted, as the API server runs them after a webhook', () => {
    fc.assert(
      fc.property(spec, inputs, (own, given) => {
        const once = asAdmitted(pod(own), given, 'pod');
        fc.pre(once.refusal === undefined);

        const twice = asAdmitted(once.pod, given, 'pod');

        expect(twice.refusal).toBeUndefined();
        expect(twice.pod).toEqual(once.pod);
      }),
    );
  });
});

describe('the plugins’ inputs, read from the running Pod as it arrived at the webhook', () => {
  const read = (value: Pod) => podFacts(value, 'team', 'running');
  const template = pod({ nodeSelector: { app: 'web' }, tolerations: [T['foo-bar-nosched']] });
  const gpuContainer = {
    name: 'a',
    resources: { limits: { 'nvidia.com/gpu': '1' }, requests: { 'nvidia.com/gpu': '1' } },
  };

  it('takes what the Pod arrived with beyond its template as the namespace’s selector and tolerations', () => {
    const arrived = read(
      pod({
        nodeSelector: { app: 'web', pool: 'merged' },
        tolerations: [T['foo-bar-nosched'], NOT_READY, UNREACHABLE, MEMORY_PRESSURE, T['faz-nosched']],
      }),
    );

    expect(
      admissionInputs(
        { template: { pod: template, path: 'template' }, running: arrived, arrived, runtimeClasses: new Map() },
        'running',
      ),
    ).toEqual({
      ...NONE,
      namespaceNodeSelector: { pool: 'merged' },
      defaultTolerations: [NOT_READY, UNREACHABLE],
      namespaceTolerations: [MEMORY_PRESSURE, T['faz-nosched']],
    });
  });

  it('leaves out of them what the RuntimeClass, the extended resources and the webhook account for', () => {
    const sandbox = { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' };
    const gvisor = runtimeClass('gvisor', { nodeSelector: { sandbox: 'gvisor' }, tolerations: [sandbox] });
    const spot = { key: 'spot', operator: 'Exists', effect: 'NoSchedule' };
    const running = read(
      pod({
        runtimeClassName: 'gvisor',
        containers: [gpuContainer],
        nodeSelector: { app: 'web', sandbox: 'gvisor', tier: 'gold' },
        tolerations: [T['foo-bar-nosched'], GPU, sandbox, spot],
      }),
    );

    const inputs = admissionInputs(
      {
        template: { pod: template, path: 'template' },
        running,
        arrived: running,
        webhookAdded: { tolerations: [spot], nodeSelectorKeys: ['tier'] },
        runtimeClasses: classes(gvisor),
      },
      'running',
    );

    expect(inputs.namespaceNodeSelector).toEqual({});
    expect(inputs.namespaceTolerations).toEqual([]);
    expect(inputs.extendedResources).toEqual(['nvidia.com/gpu']);
  });

  it.each([
    ['on when the Pod arrived with the toleration of each extended resource it requests', [GPU], ['nvidia.com/gpu']],
    ['off when it arrived without one', [], []],
  ])('reads ExtendedResourceToleration %s', (_case, tolerations, expected) => {
    const running = read(pod({ containers: [gpuContainer], tolerations }));

    expect(
      admissionInputs({ running, arrived: running, runtimeClasses: new Map() }, 'running').extendedResources,
    ).toEqual(expected);
  });

  it('reads ExtendedResourceToleration off when the running Pod requests no extended resource: it cannot tell', () => {
    const running = read(pod({ tolerations: [GPU] }));
    const requesting = pod({ containers: [gpuContainer] });

    const inputs = admissionInputs(
      { template: { pod: requesting, path: 'template' }, running, arrived: running, runtimeClasses: new Map() },
      'running',
    );

    expect(inputs.extendedResources).toEqual([]);
  });

  it('takes nothing as the namespace’s for a Pod recreated from its own spec, which carries it already', () => {
    const running = read(pod({ nodeSelector: { pool: 'merged' }, tolerations: [MEMORY_PRESSURE, NOT_READY] }));

    expect(admissionInputs({ running, arrived: running, runtimeClasses: new Map() }, 'running')).toEqual({
      ...NONE,
      defaultTolerations: [NOT_READY],
    });
  });
});
