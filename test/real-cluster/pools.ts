/**
 * The node pools of nodes.ts as workloads and rules name them (example.com/node-pool), and docs/operations.md's
 * migration as the rollout scenarios set it up: workloads whose Pods require the legacy pool, and the rule that moves
 * them to the merged one.
 */
import type { Json } from './api.ts';

/** The node selector term of one pool: example.com/node-pool In [pool]. */
function poolTerm(pool: string): Json {
  return { matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: [pool] }] };
}

/** A Pod's affinity that requires one pool. */
function poolAffinity(pool: string): Json {
  return { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm(pool)] } } };
}

/** merge-legacy-pool: the workloads of these namespaces and kinds requiring the legacy pool move to the merged one. */
function mergeLegacyPool(namespaces: readonly string[], kinds: readonly string[]): { name: string; spec: Json } {
  return {
    name: 'merge-legacy-pool',
    spec: {
      enable: true,
      workloadSelector: {
        namespaces,
        kinds,
        nodeAffinityMatch: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm('legacy')] },
        },
      },
      mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
      mutationAdd: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm('merged')] } },
      },
    },
  };
}

/** The pod template of app `name` on the legacy pool: one container, `spec` over that, `labels` beside app. */
function legacyTemplate(name: string, spec: Json = {}, labels: Readonly<Record<string, string>> = {}): Json {
  return {
    metadata: { labels: { app: name, ...labels } },
    spec: {
      containers: [{ name: 'app', image: `registry.example.com/${name}:1` }],
      affinity: poolAffinity('legacy'),
      ...spec,
    },
  };
}

/** A Deployment of `replicas` Pods labelled `app: <name>`, one container, and `podSpec` beside it. */
function deploymentObject(namespace: string, name: string, replicas: number, podSpec: Json): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: `registry.example.com/${name}:1` }], ...podSpec },
      },
    },
  };
}

export { deploymentObject, legacyTemplate, mergeLegacyPool, poolAffinity, poolTerm };
