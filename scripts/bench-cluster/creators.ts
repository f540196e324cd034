/** The cluster bench's load: checkout Pods POSTed by concurrent creators, what the API server stored, and the clean-up. */
import type { Json } from '../../test/real-cluster/api.ts';
import type { ControlPlane } from '../../test/real-cluster/control-plane.ts';
import { waitFor } from '../../test/real-cluster/processes.ts';

/** The namespace of the measured Pods. */
export const NAMESPACE = 'production';
// No scheduler serves it: the Pods stay Pending, so neither the scheduler nor the kubelet stand-in competes for the cores.
const UNSERVED_SCHEDULER = 'bench-unscheduled';
// The annotation the migration adds (examples/rules/migrate-legacy-pool.yaml).
const MIGRATION_ANNOTATION = ['example.com/migration', 'merged-pool'] as const;

/** True for a Pod that carries the migration's annotation: whichever mechanism admitted it made the change. */
export function carriesMigration(pod: Json): boolean {
  const [key, value] = MIGRATION_ANNOTATION;
  return (pod.metadata as { annotations?: Record<string, string> }).annotations?.[key] === value;
}

/** A Pod template's parts the bench copies. */
export interface PodTemplate {
  readonly metadata: Json;
  readonly spec: Json;
}

/** The ReplicaSet the Deployment controller made for the checkout Deployment: the measured Pods' controller. */
export interface PodOwner {
  readonly name: string;
  readonly uid: string;
  /** Its pod-template-hash label, which every Pod it makes carries. */
  readonly templateHash: string;
}

/**
 * A checkout Pod as the ReplicaSet controller makes it (the template, its pod-template-hash label, the ReplicaSet as
 * controller): every mechanism resolves it to Deployment production/checkout, as it would a real replica.
 */
export function checkoutPod(template: PodTemplate, owner: PodOwner, name: string): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: { ...(template.metadata.labels as Json), 'pod-template-hash': owner.templateHash },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: owner.name,
          uid: owner.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { ...template.spec, schedulerName: UNSERVED_SCHEDULER },
  };
}

/** What one batch of creations measured. */
export interface Created {
  /** Each Pod's POST as its creator timed it, in milliseconds. */
  readonly clientMs: number[];
  readonly failures: string[];
  readonly wallMs: number;
}

/** Creates `count` Pods named `prefix`-N with `concurrency` creators. */
export async function createPods(
  plane: ControlPlane,
  load: { readonly count: number; readonly concurrency: number; readonly prefix: string },
  pod: (name: string) => Json,
): Promise<Created> {
  const clientMs: number[] = [];
  const failures: string[] = [];
  let next = 0;
  const creator = async (): Promise<void> => {
    while (next < load.count) {
      const name = `${load.prefix}-${next++}`;
      const started = performance.now();
      const answer = await plane.admin.request('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, { body: pod(name) });
      clientMs.push(performance.now() - started);
      if (answer.status !== 201) failures.push(`HTTP ${answer.status}: ${answer.text.slice(0, 200)}`);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: load.concurrency }, creator));
  return { clientMs, failures, wallMs: performance.now() - started };
}

/** How many of the measured Pods (named `prefix`-N) the API server stored with the migration. */
export async function mutatedPods(plane: ControlPlane, prefix: string): Promise<number> {
  const list = await plane.admin.json<{ items: Json[] }>('GET', `/api/v1/namespaces/${NAMESPACE}/pods`);
  const measured = new RegExp(`^${prefix}-\\d+$`);
  return list.items.filter((item) => measured.test((item.metadata as { name: string }).name) && carriesMigration(item))
    .length;
}

/** Deletes every Pod of the namespace (unbound Pods go at once) and waits until none is left. */
export async function deletePods(plane: ControlPlane): Promise<void> {
  await plane.admin.json('DELETE', `/api/v1/namespaces/${NAMESPACE}/pods`);
  await waitFor(
    'the Pods to be deleted',
    async () =>
      (
        await plane.admin.json<{ items: Json[] }>('GET', `/api/v1/namespaces/${NAMESPACE}/pods`, {
          query: { limit: '1' },
        })
      ).items.length === 0
        ? true
        : undefined,
    { timeoutMs: 120_000, intervalMs: 250 },
  );
}
