/**
 * docs/api.md "Re-applying rules" against the real API server: a bare Pod the webhook mutated, recreated from its own
 * stored form as docs/api.md says (`kubectl get pod -o json`, spec.nodeName deleted, `kubectl replace --force`), comes
 * back exactly as it was, in the two cases that reviewing the mutated Pod as it arrives could not keep, and in the two
 * shapes whose stored form is not what the webhook saw (a name generated from generateName, a zone label binding
 * overwrote); `podmutation report --kubeconfig` reads them `current` before and after, and `pending` once the rules
 * change; a copy into another namespace has its stamp refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import { STAMP_ANNOTATION } from '../../lib/engine/index.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { kubectlOk } from './kubectl.ts';
import { boundPod } from './pods.ts';
import { reportJson } from './podmutation.ts';
import { useControlPlane } from './use-control-plane.ts';
import { admissionsOf, ruleFolder, serveAndRegister, type ServedWebhook } from './webhook.ts';

const cluster = useControlPlane();

const NAMESPACE = 'readmission';
const COPIES = 'readmission-copies';

type Pod = {
  metadata: { name: string; uid: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: { affinity?: Json; tolerations?: Json[]; nodeName?: string };
};

const expression = (key: string, ...values: string[]) => ({ key, operator: 'In', values });
const LEGACY_TERM = { matchExpressions: [expression('example.com/node-pool', 'legacy')] };

// The two cases. prefer-zone-a removes a key and adds a preference using it with another key: a second
// review of the mutated Pod would strip the key from the added preference, leaving a residual one. merge-pools (the
// lowest priority) replaces all node affinity, and prefer-ssd, selected by the original legacy term, adds a
// preference: a second review would no longer select prefer-ssd, and merge-pools would drop its preference.
const RULES = [
  {
    name: 'prefer-zone-a',
    spec: {
      enable: true,
      workloadSelector: { namespaces: [NAMESPACE, COPIES], names: ['zoned'] },
      mutationRemove: { nodeAffinity: { keys: ['topology.kubernetes.io/zone'] } },
      mutationAdd: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 10,
              preference: {
                matchExpressions: [
                  expression('topology.kubernetes.io/zone', 'a'),
                  expression('example.com/tier', 'web'),
                ],
              },
            },
          ],
        },
      },
    },
  },
  {
    name: 'merge-pools',
    spec: {
      enable: true,
      priority: -1,
      workloadSelector: { namespaces: [NAMESPACE], names: ['pooled'] },
      mutationRemove: { nodeAffinity: { all: true } },
      mutationAdd: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [expression('example.com/node-pool', 'merged')] }],
          },
        },
      },
    },
  },
  {
    name: 'prefer-ssd',
    spec: {
      enable: true,
      priority: 3,
      workloadSelector: {
        namespaces: [NAMESPACE],
        nodeAffinityMatch: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [LEGACY_TERM] } },
      },
      mutationAdd: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 5, preference: { matchExpressions: [expression('example.com/disk', 'ssd')] } },
          ],
        },
      },
    },
  },
];

function barePod(name: string, affinity: Json): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { app: name } },
    spec: { containers: [{ name: 'app', image: `registry.example.com/${name}:1` }], affinity },
  };
}

const ZONED = barePod('zoned', {
  nodeAffinity: {
    preferredDuringSchedulingIgnoredDuringExecution: [
      { weight: 1, preference: { matchExpressions: [expression('topology.kubernetes.io/zone', 'b')] } },
    ],
  },
});
const POOLED = barePod('pooled', {
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [LEGACY_TERM] } },
});

function podAt(plane: ControlPlane, namespace: string, name: string): Promise<Pod> {
  return plane.admin.json<Pod>('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);
}

/** What the scheduling comparison of the two Pods covers: their node affinity, tolerations and annotations. */
function scheduling(pod: Pod): Json {
  return {
    affinity: pod.spec.affinity ?? null,
    tolerations: pod.spec.tolerations ?? null,
    annotations: pod.metadata.annotations ?? {},
  };
}

/**
 * docs/api.md "Re-applying rules": `kubectl get pod -o json`, spec.nodeName deleted (a Pod sent bound is left alone),
 * then `kubectl replace --force` of the rest.
 */
async function recreateFromOwnSpec(plane: ControlPlane, name: string, namespace = NAMESPACE): Promise<Pod> {
  const stored = JSON.parse(await kubectlOk(plane, ['get', 'pod', name, '-n', namespace, '-o', 'json'])) as Pod;
  delete stored.spec.nodeName;
  await kubectlOk(plane, ['replace', '--force', '-f', '-'], JSON.stringify(stored));
  return podAt(plane, namespace, name);
}

/** `podmutation report -n NAMESPACE` under the rules, as JSON: its exit code and the report. */
async function reportOf(plane: ControlPlane, rules: string, namespace = NAMESPACE) {
  const { run, result } = await reportJson(plane, ['--rules', rules, '-n', namespace]);
  return { code: run.code, result };
}

describe('a bare Pod the webhook mutated, recreated from its own spec', () => {
  let webhook: ServedWebhook;
  let rules: string;
  const first: Record<string, Pod> = {};

  beforeAll(async () => {
    const plane = cluster();
    rules = await ruleFolder(plane, RULES);
    webhook = await serveAndRegister(plane, { rules: [rules] });
    await plane.ensureNamespace(NAMESPACE);
    await plane.ensureNamespace(COPIES);
    for (const pod of [ZONED, POOLED]) {
      const stored = await plane.admin.json<Pod>('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, { body: pod });
      first[stored.metadata.name] = stored;
    }
  });
  afterAll(async () => webhook?.stop());

  it('is stamped by the webhook with the rules it applied', () => {
    const annotations = (name: string) => first[name]!.metadata.annotations ?? {};

    expect(annotations('zoned')[APPLIED_ANNOTATION]).toBe('prefer-zone-a');
    expect(annotations('pooled')[APPLIED_ANNOTATION]).toBe('merge-pools,prefer-ssd');
    for (const name of ['zoned', 'pooled'])
      expect(JSON.parse(annotations(name)[STAMP_ANNOTATION] ?? '{}')).toHaveProperty('mac');
  });

  it('is read current by the report, which exits 0', async () => {
    const { code, result } = await reportOf(cluster(), rules);

    expect(result.totals).toEqual({ pods: 2, unaffected: 0, current: 2, pending: 0, denied: 0 });
    expect(code).toBe(0);
  });

  it.each(['zoned', 'pooled'])(
    'comes back exactly as it was stored (%s): the same scheduling fields, annotations and stamp',
    async (name) => {
      const recreated = await recreateFromOwnSpec(cluster(), name);

      expect(recreated.metadata.uid).not.toBe(first[name]!.metadata.uid);
      expect(scheduling(recreated)).toEqual(scheduling(first[name]!));
    },
  );

  it('is still read current by the report once recreated', async () => {
    const { code, result } = await reportOf(cluster(), rules);

    expect(result.totals).toEqual({ pods: 2, unaffected: 0, current: 2, pending: 0, denied: 0 });
    expect(code).toBe(0);
  });

  it('copied into another namespace, has its stamp refused and is reviewed as new', async () => {
    const plane = cluster();
    const { metadata, spec } = first.zoned!;
    const copy = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'zoned', namespace: COPIES, labels: { app: 'zoned' }, annotations: metadata.annotations },
      spec: { ...spec, nodeName: undefined },
    };

    const stored = await plane.admin.json<Pod>('POST', `/api/v1/namespaces/${COPIES}/pods`, { body: copy });

    // Reviewed as the Pod it is: prefer-zone-a strips its key from the preference it added, and adds it again.
    const preferences = (
      stored.spec.affinity as { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: Json[] } }
    ).nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution;
    expect(preferences).toEqual([
      { weight: 10, preference: { matchExpressions: [expression('example.com/tier', 'web')] } },
      {
        weight: 10,
        preference: {
          matchExpressions: [expression('topology.kubernetes.io/zone', 'a'), expression('example.com/tier', 'web')],
        },
      },
    ]);
    expect(stored.metadata.annotations?.[STAMP_ANNOTATION]).not.toBe(metadata.annotations?.[STAMP_ANNOTATION]);
  });
});

// The two shapes whose stored form is not what the webhook saw: a bare Pod named by generateName (the name is
// generated after admission: k8s.io/apiserver registry/rest BeforeCreate), and a Pod whose author set its zone label,
// which binding overwrites with its Node's (plugin/pkg/admission/podtopologylabels). The author's zone is one no test
// Node is in (test/real-cluster/nodes.ts), so binding always overwrites it.
const SHAPES = 'readmission-shapes';
const AUTHOR_ZONE = 'eu-west-1c';
const ZONE = 'topology.kubernetes.io/zone';
const LEGACY_PREFERENCE = { weight: 1, preference: { matchExpressions: [expression(ZONE, 'b')] } };

/**
 * prefer-zone-a as in RULES, for the Pods of SHAPES: it removes the zone key, so that reviewing the mutated Pod as it is
 * changes it; zoned-by-author, selected by its author's zone, pins them to the merged pool. `changed` is the same rules
 * after an edit: prefer-zone-a now selects the Pods by the preference they were sent with, which the rule itself
 * removed, so only a review of the Pod as its author sent it sees it, and adds its preference with another weight.
 */
function shapeRules(changed: boolean) {
  return [
    {
      name: 'prefer-zone-a',
      spec: {
        enable: true,
        workloadSelector: {
          namespaces: [SHAPES],
          labelSelector: { matchLabels: { app: 'generated' } },
          ...(changed
            ? { nodeAffinityMatch: { preferredDuringSchedulingIgnoredDuringExecution: [LEGACY_PREFERENCE] } }
            : {}),
        },
        mutationRemove: { nodeAffinity: { keys: [ZONE] } },
        mutationAdd: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: changed ? 20 : 10,
                preference: { matchExpressions: [expression(ZONE, 'a'), expression('example.com/tier', 'web')] },
              },
            ],
          },
        },
      },
    },
    {
      name: 'zoned-by-author',
      spec: {
        enable: true,
        workloadSelector: { namespaces: [SHAPES], labelSelector: { matchLabels: { [ZONE]: AUTHOR_ZONE } } },
        mutationAdd: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [expression('example.com/node-pool', changed ? 'legacy' : 'merged')] },
              ],
            },
          },
        },
      },
    },
  ];
}

const GENERATED = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { generateName: 'generated-', namespace: SHAPES, labels: { app: 'generated' } },
  spec: {
    containers: [{ name: 'app', image: 'registry.example.com/generated:1' }],
    affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [LEGACY_PREFERENCE] } },
  },
};
const ZONED_BY_AUTHOR = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'zoned-by-author', namespace: SHAPES, labels: { app: 'zoned-by-author', [ZONE]: AUTHOR_ZONE } },
  spec: { containers: [{ name: 'app', image: 'registry.example.com/zoned:1' }] },
};

describe('a Pod whose stored form is not what the webhook saw, recreated from its own spec', () => {
  let webhook: ServedWebhook;
  let rules: string;
  const first: Record<string, Pod> = {};

  beforeAll(async () => {
    const plane = cluster();
    rules = await ruleFolder(plane, shapeRules(false));
    webhook = await serveAndRegister(plane, { rules: [rules] });
    await plane.ensureNamespace(SHAPES);
    for (const [shape, pod] of [
      ['generated', GENERATED],
      ['zoned-by-author', ZONED_BY_AUTHOR],
    ] as const) {
      const created = await plane.admin.json<Pod>('POST', `/api/v1/namespaces/${SHAPES}/pods`, { body: pod });
      // Bound, with the Node's zone over the author's.
      first[shape] = await boundPod(plane, SHAPES, created.metadata.name);
    }
  });
  afterAll(async () => webhook?.stop());

  it('is stored under a name the webhook did not see, or with a zone its author did not send', () => {
    expect(first.generated!.metadata.name).toMatch(/^generated-[a-z0-9]{5}$/);
    expect(first['zoned-by-author']!.metadata.labels?.[ZONE]).toMatch(/^eu-west-1[ab]$/);
    expect(first.generated!.metadata.annotations?.[APPLIED_ANNOTATION]).toBe('prefer-zone-a');
    expect(first['zoned-by-author']!.metadata.annotations?.[APPLIED_ANNOTATION]).toBe('zoned-by-author');
  });

  it('is read current by the report under the rules that admitted it', async () => {
    const { code, result } = await reportOf(cluster(), rules, SHAPES);

    expect(result.totals).toEqual({ pods: 2, unaffected: 0, current: 2, pending: 0, denied: 0 });
    expect(code).toBe(0);
  });

  it('is read pending by the report once its rules change', async () => {
    const changed = await ruleFolder(cluster(), shapeRules(true));
    const { result } = await reportOf(cluster(), changed, SHAPES);

    expect(result.totals).toEqual({ pods: 2, unaffected: 0, current: 0, pending: 2, denied: 0 });
  });

  it.each(['generated', 'zoned-by-author'])(
    'comes back exactly as it was stored (%s): the webhook checks its stamp and sends no patch',
    async (shape) => {
      const stored = first[shape]!;
      const recreated = await recreateFromOwnSpec(cluster(), stored.metadata.name, SHAPES);

      expect(recreated.metadata.uid).not.toBe(stored.metadata.uid);
      expect(scheduling(recreated)).toEqual(scheduling(stored));
      expect(admissionsOf(webhook, stored.metadata.name).at(-1)).toMatchObject({
        stamp: 'checked',
        patchOperations: 0,
      });
    },
  );

  it('is still read current by the report once recreated', async () => {
    const { code, result } = await reportOf(cluster(), rules, SHAPES);

    expect(result.totals).toEqual({ pods: 2, unaffected: 0, current: 2, pending: 0, denied: 0 });
    expect(code).toBe(0);
  });
});
