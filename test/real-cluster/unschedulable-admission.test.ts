/**
 * Where a changed Pod fits, in front of a real API server and kube-scheduler: the README's migration with a misspelt
 * target pool (example.com/node-pool In [mergd]) served by `podmutation serve --capacity` over the cluster's own Nodes
 * (`kubectl get nodes -o yaml`). kubectl prints the admission warning to whoever creates the Pod; a rule annotated
 * if-unschedulable: skip leaves the Pod as it was sent, and the scheduler binds it where it asked to run.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { kubectlOk, podMutationObject } from './kubectl.ts';
import { boundPod, podNow } from './pods.ts';
import { legacyTemplate, poolAffinity, poolTerm } from './pools.ts';
import { useControlPlane } from './use-control-plane.ts';
import { serveAndRegister, type ServedWebhook } from './webhook.ts';
import { IF_UNSCHEDULABLE_ANNOTATION } from '../../lib/api/constants.ts';

const cluster = useControlPlane();

const WARN = 'strand-warn';
const SKIP = 'strand-skip';
const FITS = 'strand-fits';

/** The README's migration of the namespace's Pods from the legacy pool to `target`, with these product annotations. */
function migration(name: string, namespace: string, target: string, annotations: Record<string, string> = {}): Json {
  const resource = podMutationObject(name, {
    enable: true,
    workloadSelector: { namespaces: [namespace], nodeAffinityMatch: poolAffinity('legacy')['nodeAffinity'] },
    mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
    mutationAdd: poolAffinity(target),
  });
  return { ...resource, metadata: { name, annotations } };
}

/** A bare Pod on the legacy pool, as its manifest sends it. */
function legacyPod(name: string, namespace: string): Json {
  const template = legacyTemplate(name) as { metadata: Json; spec: Json };
  return { apiVersion: 'v1', kind: 'Pod', metadata: { ...template.metadata, name, namespace }, spec: template.spec };
}

/** `kubectl create -f -` of the Pod: its exit code and what kubectl printed on stderr (warnings among it). */
async function createPod(plane: ControlPlane, pod: Json): Promise<{ code: number; stderr: string }> {
  const run = await plane.kubectl(['create', '-f', '-'], { input: stringify(pod) });
  return { code: run.code ?? -1, stderr: run.stderr };
}

function requiredPools(pod: { readonly spec: Json }): unknown {
  const affinity = pod.spec['affinity'] as
    { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: Json[] } } } | undefined;
  return affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
}

describe('a migration to a misspelt pool, through the webhook', () => {
  let webhook: ServedWebhook;

  beforeAll(async () => {
    const plane = cluster();
    const rulesFile = join(plane.dir, 'unschedulable-rules.yaml');
    const rules = [
      migration('move-to-mergd', WARN, 'mergd'),
      migration('move-to-mergd-or-skip', SKIP, 'mergd', { [IF_UNSCHEDULABLE_ANNOTATION]: 'skip' }),
      migration('move-to-merged-or-skip', FITS, 'merged', { [IF_UNSCHEDULABLE_ANNOTATION]: 'skip' }),
    ];
    await writeFile(rulesFile, rules.map((rule) => stringify(rule)).join('---\n'));
    // The cluster's Nodes as kubectl prints them: the form `--capacity` reads, and the Nodes the scheduler places on.
    const capacity = join(plane.dir, 'unschedulable-capacity.yaml');
    await writeFile(capacity, await kubectlOk(plane, ['get', 'nodes', '-o', 'yaml']));
    webhook = await serveAndRegister(plane, { rules: [rulesFile], flags: ['--capacity', capacity] });
    for (const namespace of [WARN, SKIP, FITS]) await plane.ensureNamespace(namespace);
  });
  afterAll(async () => webhook?.stop());

  it('prints the admission warning to whoever creates the Pod, and the Pod is stored as the rule made it', async () => {
    const plane = cluster();
    const created = await createPod(plane, legacyPod('checkout', WARN));

    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toMatch(
      /Warning: the Pod fit before PodMutation move-to-mergd and by node labels, taints and cordons now fits nowhere: /,
    );
    expect(created.stderr).toContain('example.com/node-pool');
    const stored = await podNow(plane, WARN, 'checkout');
    expect(stored?.metadata.annotations?.[APPLIED_ANNOTATION]).toBe('move-to-mergd');
    expect(requiredPools(stored!)).toEqual([poolTerm('mergd')]);
  });

  it('admits the Pod unmutated under if-unschedulable: skip, says why, and the scheduler binds it to a legacy Node', async () => {
    const plane = cluster();
    const created = await createPod(plane, legacyPod('checkout', SKIP));

    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toMatch(
      /Warning: PodMutation "move-to-mergd-or-skip" not applied \(if-unschedulable: skip\): with it the Pod/,
    );
    const bound = await boundPod(plane, SKIP, 'checkout');
    expect(bound.metadata.annotations?.[APPLIED_ANNOTATION]).toBeUndefined();
    expect(requiredPools(bound)).toEqual([poolTerm('legacy')]);
    expect(bound.spec.nodeName).toMatch(/^legacy-/);
  });

  it('applies a skip rule whose target exists, without a warning, and the scheduler binds the Pod there', async () => {
    const plane = cluster();
    const created = await createPod(plane, legacyPod('checkout', FITS));

    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).not.toContain('Warning');
    const bound = await boundPod(plane, FITS, 'checkout');
    expect(bound.metadata.annotations?.[APPLIED_ANNOTATION]).toBe('move-to-merged-or-skip');
    expect(bound.spec.nodeName).toMatch(/^merged-/);
  });
});
