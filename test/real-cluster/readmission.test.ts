/**
 * docs/api.md "Re-applying rules" against the real API server: a bare Pod the webhook mutated, recreated from its own
 * stored form as docs/api.md says (`kubectl get pod -o yaml`, then `kubectl replace --force`), comes back exactly as it
 * was, in the two cases that reviewing the mutated Pod as it arrives could not keep; `podmutation report --kubeconfig`
 * reads both Pods `current` before and after; a copy into another namespace has its stamp refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import { STAMP_ANNOTATION } from '../../lib/engine/index.ts';
import type { MigrationReport } from '../../lib/report/index.ts';
import { runPodmutation } from '../support/cli.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { useControlPlane } from './use-control-plane.ts';
import { registerWebhook, ruleFolder, serveWebhook, type ServedWebhook } from './webhook.ts';

const cluster = useControlPlane();

const NAMESPACE = 'readmission';
const COPIES = 'readmission-copies';

type Pod = {
  metadata: { name: string; uid: string; annotations?: Record<string, string> };
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

async function kubectlOk(plane: ControlPlane, args: readonly string[], input?: string): Promise<string> {
  const run = await plane.kubectl(args, input === undefined ? {} : { input });
  expect(run.code, `kubectl ${args.join(' ')}: ${run.stderr}`).toBe(0);
  return run.stdout;
}

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

/** docs/api.md "Re-applying rules": `kubectl get pod -o yaml`, then `kubectl replace --force` of what it printed. */
async function recreateFromOwnSpec(plane: ControlPlane, name: string): Promise<Pod> {
  const stored = await kubectlOk(plane, ['get', 'pod', name, '-n', NAMESPACE, '-o', 'yaml']);
  await kubectlOk(plane, ['replace', '--force', '-f', '-'], stored);
  return podAt(plane, NAMESPACE, name);
}

async function reportOf(
  plane: ControlPlane,
  rules: string,
): Promise<{ readonly code: number | null; readonly result: MigrationReport }> {
  const run = await runPodmutation([
    'report',
    '--kubeconfig',
    plane.adminKubeconfig,
    '--rules',
    rules,
    '-n',
    NAMESPACE,
    '-o',
    'json',
  ]);
  return { code: run.code, result: JSON.parse(run.stdout) as MigrationReport };
}

describe('a bare Pod the webhook mutated, recreated from its own spec', () => {
  let webhook: ServedWebhook;
  let rules: string;
  const first: Record<string, Pod> = {};

  beforeAll(async () => {
    const plane = cluster();
    rules = await ruleFolder(plane, RULES);
    webhook = await serveWebhook(plane, { rules: [rules] });
    await registerWebhook(plane, webhook);
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
