/**
 * Child process of `npm run scale:sync`: everything the sync Lambda talks to, in a process of its own, so that the
 * process running the shipped sync bundle is measured alone. The fake API server over HTTPS holds the PodMutations,
 * an embedded DynamoDB (dynalite) the table, the AWS fake the kubeconfig secret; the recording relay in front of the
 * last two is the bundle's AWS endpoint and counts its calls. Driven over the IPC channel (WorldRequest in,
 * WorldAnswer out).
 */
import { startFakeAws } from '../test/cluster/fake-aws.ts';
import { kubeconfigFor, startFakeApiServer } from '../test/cluster/fake-api-server.ts';
import { startRecordingRelay } from '../test/deploy/lambda-run.ts';
import { createFreshTable, startTestDynamo } from '../test/support/dynamo.ts';

/** What the parent asks: fill the cluster, change some specs, or report what the server saw since the last report. */
type WorldRequest =
  | { readonly kind: 'fill'; readonly rules: number }
  | { readonly kind: 'change'; readonly count: number }
  | { readonly kind: 'stats' }
  | { readonly kind: 'close' };

/** What the world answers, one answer per request (and `ready` once at the start). */
type WorldAnswer =
  | {
      readonly kind: 'ready';
      readonly awsEndpoint: string;
      readonly dynamoEndpoint: string;
      readonly tableName: string;
      readonly kubeconfigSecretArn: string;
    }
  | { readonly kind: 'filled'; readonly rules: number; readonly invalid: number; readonly jsonBytes: number }
  | { readonly kind: 'changed'; readonly names: readonly string[] }
  | {
      readonly kind: 'stats';
      readonly listRequests: number;
      readonly statusPatches: number;
      readonly patchedNames: readonly string[];
      /** TLS connections the API server accepted. */
      readonly connections: number;
      /** AWS calls through the relay, by IAM action. */
      readonly awsCalls: Readonly<Record<string, number>>;
      /** CPU time of this process since the last report. */
      readonly cpuMs: number;
      readonly rssBytes: number;
    };

const NAMESPACES = 200;
// One rule in a hundred carries a typo (`namespace:` beside `namespaces:`), which the sync reports Accepted=False.
const INVALID_EVERY = 100;

/** A PodMutation of the kinds platform teams write, about 600 bytes of spec; `revision` moves its target pool. */
function podMutation(index: number, revision: number): { metadata: { name: string }; spec: Record<string, unknown> } {
  const team = `team-${index % NAMESPACES}`;
  const pool = (value: string) => ({
    matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: [value] }],
  });
  const target = `pool-${index % 17}-r${revision}`;
  const shape = index % 4;
  const workloadSelector =
    shape === 0
      ? { namespaces: [team, `${team}-staging`], kinds: ['Deployment', 'StatefulSet'] }
      : shape === 1
        ? { namespaces: [team], names: [`service-${index}`, `worker-${index}`] }
        : shape === 2
          ? {
              labelSelector: {
                matchLabels: { 'app.kubernetes.io/name': `service-${index}` },
                matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }],
              },
            }
          : {
              namespaces: [team],
              nodeAffinityMatch: {
                requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [pool('legacy')] },
              },
            };
  return {
    metadata: { name: `${team}-migrate-${String(index).padStart(5, '0')}` },
    spec: {
      enable: true,
      priority: index % 10,
      workloadSelector:
        index % INVALID_EVERY === INVALID_EVERY - 1 ? { ...workloadSelector, namespace: [team] } : workloadSelector,
      mutationRemove: {
        nodeAffinity: { keys: ['example.com/node-pool'] },
        nodeSelector: { keys: ['example.com/node-pool'] },
      },
      mutationAdd: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [pool(target)] },
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 50,
              preference: {
                matchExpressions: [
                  { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7g', 'c7g'] },
                ],
              },
            },
          ],
        },
        tolerations: [{ key: 'example.com/dedicated', operator: 'Equal', value: target, effect: 'NoSchedule' }],
        annotations: { 'example.com/migrated-by': 'platform-team' },
      },
    },
  };
}

const KUBECONFIG_SECRET_ARN =
  'arn:aws:secretsmanager:us-east-1:123456789012:secret:podmutation/scale-kubeconfig-AbCdEf';
const server = await startFakeApiServer();
const dynamo = await startTestDynamo();
const tableName = await createFreshTable(dynamo.endpoint);
const aws = await startFakeAws();
aws.secrets.set(KUBECONFIG_SECRET_ARN, kubeconfigFor(server));
const relay = await startRecordingRelay({ dynamodb: dynamo.endpoint, other: aws.url });
const revisions: number[] = [];
const reported = { patches: 0, requests: 0, connections: 0, calls: 0, cpu: process.cpuUsage() };

function send(answer: WorldAnswer): void {
  process.send?.(answer);
}

function answer(request: WorldRequest): WorldAnswer | undefined {
  switch (request.kind) {
    case 'fill': {
      let jsonBytes = 0;
      for (let index = 0; index < request.rules; index += 1) {
        revisions[index] = 0;
        const resource = podMutation(index, 0);
        jsonBytes += JSON.stringify(resource.spec).length;
        server.put(resource);
      }
      return { kind: 'filled', rules: request.rules, invalid: Math.floor(request.rules / INVALID_EVERY), jsonBytes };
    }
    case 'change': {
      // Spread over the list, so that the changed rules sit on different pages.
      const step = Math.max(1, Math.floor(revisions.length / request.count));
      const names: string[] = [];
      for (let index = 0; index < revisions.length && names.length < request.count; index += step) {
        const revision = (revisions[index] ?? 0) + 1;
        revisions[index] = revision;
        const resource = podMutation(index, revision);
        server.put(resource);
        names.push(resource.metadata.name);
      }
      return { kind: 'changed', names };
    }
    case 'stats': {
      const patches = server.statusPatches.slice(reported.patches);
      const lists = server.requests.slice(reported.requests).filter((recorded) => recorded.method === 'GET').length;
      const awsCalls: Record<string, number> = {};
      for (const { action } of relay.calls.slice(reported.calls)) awsCalls[action] = (awsCalls[action] ?? 0) + 1;
      const connections = server.connections - reported.connections;
      const { user, system } = process.cpuUsage(reported.cpu);
      Object.assign(reported, {
        patches: server.statusPatches.length,
        requests: server.requests.length,
        connections: server.connections,
        calls: relay.calls.length,
        cpu: process.cpuUsage(),
      });
      const patchedNames = patches.map((patch) => patch.name);
      return {
        kind: 'stats',
        listRequests: lists,
        statusPatches: patches.length,
        patchedNames,
        connections,
        awsCalls,
        cpuMs: (user + system) / 1000,
        rssBytes: process.memoryUsage().rss,
      };
    }
    case 'close':
      return undefined;
  }
}

process.on('message', (request: WorldRequest) => {
  const reply = answer(request);
  if (reply !== undefined) {
    send(reply);
    return;
  }
  void Promise.all([relay.close(), aws.close(), server.close(), dynamo.close()]).then(() => process.exit(0));
});
send({
  kind: 'ready',
  awsEndpoint: relay.url,
  dynamoEndpoint: dynamo.endpoint,
  tableName,
  kubeconfigSecretArn: KUBECONFIG_SECRET_ARN,
});

export type { WorldAnswer, WorldRequest };
