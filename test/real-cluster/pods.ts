/**
 * The test cluster's Pods, StatefulSets and PodDisruptionBudgets as the suite reads them through the API server, and the
 * waits for what their controllers do: a Pod bound or Ready (again), a StatefulSet or a budget whose controller has
 * observed it and settled.
 */
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { waitFor } from './processes.ts';

/** A Pod as the API server stores it, as far as the suite reads it. */
interface ClusterPod {
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly uid: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
    readonly ownerReferences?: Json[];
    readonly deletionTimestamp?: string;
  };
  readonly spec: Json & {
    readonly nodeName?: string;
    readonly nodeSelector?: Record<string, string>;
    readonly tolerations?: Json[];
    readonly containers: { readonly name: string; readonly image: string }[];
  };
  readonly status?: { readonly phase?: string; readonly conditions?: { type: string; status: string }[] };
}

/** The status of a StatefulSet as its controller writes it. */
interface StatefulSetStatus {
  readonly observedGeneration?: number;
  readonly currentRevision?: string;
  readonly updateRevision?: string;
  readonly readyReplicas?: number;
  readonly updatedReplicas?: number;
}

/** The status of a PodDisruptionBudget as the disruption controller writes it. */
interface BudgetStatus {
  readonly observedGeneration?: number;
  readonly disruptionsAllowed?: number;
  readonly currentHealthy?: number;
}

const podPath = (namespace: string, name: string) => `/api/v1/namespaces/${namespace}/pods/${name}`;

/** The Pod as it is now, or undefined when there is none of that name. */
async function podNow(plane: ControlPlane, namespace: string, name: string): Promise<ClusterPod | undefined> {
  const answer = await plane.admin.request('GET', podPath(namespace, name));
  return answer.status === 200 ? (answer.body as ClusterPod) : undefined;
}

/** True for a Pod not being deleted whose Ready condition is True. */
function isReady(pod: ClusterPod | undefined): pod is ClusterPod {
  return (
    pod !== undefined &&
    pod.metadata.deletionTimestamp === undefined &&
    (pod.status?.conditions ?? []).some(({ type, status }) => type === 'Ready' && status === 'True')
  );
}

/** The Pod once it is Ready; with `notUid`, once a Pod of that name other than that uid is (it was created again). */
async function readyPod(plane: ControlPlane, namespace: string, name: string, notUid = ''): Promise<ClusterPod> {
  return waitFor(`Pod ${namespace}/${name} Ready${notUid === '' ? '' : ` again (not ${notUid})`}`, async () => {
    const pod = await podNow(plane, namespace, name);
    return isReady(pod) && pod.metadata.uid !== notUid ? pod : undefined;
  });
}

/** The Pod once the scheduler bound it to a Node. */
async function boundPod(plane: ControlPlane, namespace: string, name: string): Promise<ClusterPod> {
  return waitFor(`the scheduler to bind Pod ${namespace}/${name}`, async () => {
    const found = await plane.admin.json<ClusterPod>('GET', podPath(namespace, name));
    return found.spec.nodeName === undefined ? undefined : found;
  });
}

/** The Pods of the namespace that the label selector selects, leaving out those being deleted. */
async function livePods(plane: ControlPlane, namespace: string, selector: string): Promise<ClusterPod[]> {
  const list = await plane.admin.json<{ items: ClusterPod[] }>('GET', `/api/v1/namespaces/${namespace}/pods`, {
    query: { labelSelector: selector },
  });
  return list.items.filter((pod) => pod.metadata.deletionTimestamp === undefined);
}

/** The statuses `settled` reads, by kind, and where each kind's objects are. */
interface Statuses {
  readonly StatefulSet: StatefulSetStatus;
  readonly PodDisruptionBudget: BudgetStatus;
}
const COLLECTIONS: { readonly [K in keyof Statuses]: (namespace: string) => string } = {
  StatefulSet: (namespace) => `/apis/apps/v1/namespaces/${namespace}/statefulsets`,
  PodDisruptionBudget: (namespace) => `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets`,
};

/** The object's status once its controller observed its generation and `check` holds for the status. */
async function settled<K extends keyof Statuses>(
  plane: ControlPlane,
  kind: K,
  namespace: string,
  name: string,
  check: (status: Statuses[K]) => boolean,
): Promise<Statuses[K]> {
  const path = `${COLLECTIONS[kind](namespace)}/${name}`;
  return waitFor(`${kind} ${namespace}/${name} to settle`, async () => {
    const object = await plane.admin.json<{ metadata: { generation: number }; status?: Statuses[K] }>('GET', path);
    const status = object.status;
    return status !== undefined && status.observedGeneration === object.metadata.generation && check(status)
      ? status
      : undefined;
  });
}

export { boundPod, livePods, podNow, readyPod, settled };
export type { ClusterPod };
