/**
 * What the kubelets of the test Nodes would do, as kwok does it: every Pod the scheduler bound is marked Running and
 * Ready through the status subresource, and a Pod being deleted gracefully is removed at once (the kubelet's final
 * delete with grace period 0), so that Deployments, StatefulSets and Jobs roll out and complete.
 */
import type { ApiClient, Json } from './api.ts';

interface PodView {
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly uid: string;
    readonly deletionTimestamp?: string;
  };
  readonly spec: {
    readonly nodeName?: string;
    readonly containers: readonly { readonly name: string; readonly image?: string }[];
  };
  readonly status?: {
    readonly phase?: string;
    readonly conditions?: readonly { readonly type: string; readonly status: string }[];
  };
}

/** The running stand-in. */
interface Kubelet {
  /** Pods it marked Running so far. */
  readonly started: () => number;
  stop(): Promise<void>;
}

function isReady(pod: PodView): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some(({ type, status }) => type === 'Ready' && status === 'True')
  );
}

function runningStatus(pod: PodView, index: number): Json {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = (type: string) => ({ type, status: 'True', lastTransitionTime: now });
  const ip = `10.244.${Math.floor(index / 250) % 250}.${(index % 250) + 2}`;
  return {
    status: {
      phase: 'Running',
      startTime: now,
      hostIP: '10.0.0.10',
      podIP: ip,
      podIPs: [{ ip }],
      conditions: [
        condition('PodReadyToStartContainers'),
        condition('Initialized'),
        condition('ContainersReady'),
        condition('Ready'),
        condition('PodScheduled'),
      ],
      containerStatuses: pod.spec.containers.map(({ name, image }) => ({
        name,
        image: image ?? '',
        imageID: '',
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: now } },
      })),
    },
  };
}

/** Starts the stand-in over every namespace; it lists, then watches, and lists again whenever a watch ends. */
function startKubelet(api: ApiClient, onError: (error: Error) => void = () => undefined): Kubelet {
  const controller = new AbortController();
  const inFlight = new Set<string>();
  let started = 0;
  let addresses = 0;
  let stopped = false;

  async function act(pod: PodView): Promise<void> {
    const { name, namespace, uid } = pod.metadata;
    const path = `/api/v1/namespaces/${namespace}/pods/${name}`;
    if (pod.metadata.deletionTimestamp !== undefined) {
      const answer = await api.request('DELETE', path, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid } },
      });
      if (answer.status >= 300 && answer.status !== 404 && answer.status !== 409)
        throw new Error(`deleting pod ${namespace}/${name}: HTTP ${answer.status}`);
      return;
    }
    if (
      pod.spec.nodeName === undefined ||
      isReady(pod) ||
      pod.status?.phase === 'Succeeded' ||
      pod.status?.phase === 'Failed'
    )
      return;
    const answer = await api.request('PATCH', `${path}/status`, {
      body: runningStatus(pod, addresses++),
      contentType: 'application/merge-patch+json',
    });
    if (answer.status === 200) started += 1;
    else if (answer.status !== 404 && answer.status !== 409)
      throw new Error(`marking pod ${namespace}/${name} running: HTTP ${answer.status}: ${answer.text.slice(0, 300)}`);
  }

  function consider(pod: PodView): void {
    const key = `${pod.metadata.uid}/${pod.metadata.deletionTimestamp ?? ''}`;
    if (inFlight.has(key)) return;
    inFlight.add(key);
    act(pod)
      .catch((error: unknown) => {
        if (!stopped) onError(error as Error);
      })
      .finally(() => inFlight.delete(key));
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        const list = await api.json<{ metadata: { resourceVersion: string }; items: PodView[] }>('GET', '/api/v1/pods');
        for (const pod of list.items) consider(pod);
        await api.watch(
          '/api/v1/pods',
          list.metadata.resourceVersion,
          (event) => {
            if (event.type === 'ADDED' || event.type === 'MODIFIED') consider(event.object as unknown as PodView);
          },
          controller.signal,
        );
      } catch (error) {
        if (stopped) return;
        onError(error as Error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  const running = loop();
  return {
    started: () => started,
    stop: async () => {
      stopped = true;
      controller.abort();
      await running;
    },
  };
}

export { startKubelet };
export type { Kubelet };
