/**
 * The access of `podmutation report` and `podmutation rollout` as infra/ grants it, on the real RBAC authorizer:
 * users whose client certificates put them in the files' placeholder groups, the files applied as docs/operations.md
 * says. Per namespace (infra/rbac-report.yaml without its every-namespace binding, plus a RoleBinding per namespace),
 * `-n` works in the namespaces bound and is refused elsewhere, naming the namespace and the binding to add; `-A` needs
 * the every-namespace binding. Neither file gives the sync anything.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationReport } from '../../lib/report/index.ts';
import { runPodmutation, type CliRun } from '../support/cli.ts';
import type { Json } from './api.ts';
import { clientCertificate } from './certificates.ts';
import { kubeconfigYaml, type ControlPlane } from './control-plane.ts';
import {
  applyInfra,
  applyPodMutation,
  canI as kubectlCanI,
  kubectlObjects,
  kubectlOk,
  untilAllowed as untilKubectlAllows,
  untilRolledOut,
} from './kubectl.ts';
import { settled } from './pods.ts';
import { rolloutRecords } from './podmutation.ts';
import { legacyTemplate, mergeLegacyPool } from './pools.ts';
import { useControlPlane } from './use-control-plane.ts';
import { ruleFolder, serveAndRegister, type ServedWebhook } from './webhook.ts';

const cluster = useControlPlane();

const INFRA = fileURLToPath(new URL('../../infra/', import.meta.url));
const BOUND = 'team-bound';
const UNBOUND = 'team-unbound';
const ALL_NAMESPACES_LABEL = 'podmutation.agent.cloudpilot.ai/scope!=all-namespaces';
const RULE = mergeLegacyPool([BOUND, UNBOUND], ['Deployment', 'StatefulSet']);
/** The two identities: users in the placeholder groups the files bind, as an access entry would map them. */
const REPORTER = { user: 'report-runner', group: 'podmutation-report' };
const ROLLER = { user: 'rollout-runner', group: 'podmutation-rollout' };

/** A Deployment `web` and an OnDelete StatefulSet `journal` (whose Pods rollout deletes) in the namespace. */
function workloads(namespace: string): Json[] {
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: legacyTemplate('web') },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'journal', namespace },
      spec: {
        replicas: 1,
        serviceName: 'journal',
        updateStrategy: { type: 'OnDelete' },
        selector: { matchLabels: { app: 'journal' } },
        template: legacyTemplate('journal'),
      },
    },
  ];
}

/** A kubeconfig of `user` in `group`, by a client certificate of the cluster's CA (the API server reads O as groups). */
async function kubeconfigOf(plane: ControlPlane, identity: { user: string; group: string }): Promise<string> {
  const { cert, key } = await clientCertificate(plane.certificates.ca, identity.user, [identity.group]);
  const path = join(plane.dir, `${identity.user}.kubeconfig`);
  await writeFile(
    path,
    kubeconfigYaml(plane.server, plane.certificates.ca.cert, {
      'client-certificate-data': Buffer.from(cert).toString('base64'),
      'client-key-data': Buffer.from(key).toString('base64'),
    }),
  );
  return path;
}

/** kubectl's flags that act as the identity. */
function actingAs(identity: { user: string; group: string }): string[] {
  return [`--as=${identity.user}`, `--as-group=${identity.group}`];
}

/** What `kubectl auth can-i` answers for the identity: the RBAC authorizer's own verdict. */
function canI(plane: ControlPlane, identity: { user: string; group: string }, args: readonly string[]) {
  return kubectlCanI(plane, [...args, ...actingAs(identity)]);
}

/** Waits until a binding just applied takes effect for the identity. */
function untilAllowed(plane: ControlPlane, identity: { user: string; group: string }, args: readonly string[]) {
  return untilKubectlAllows(plane, identity.user, [...args, ...actingAs(identity)]);
}

/** Each workload's last state, as `namespace/name: state`. */
function lastStates(run: CliRun): Record<string, string> {
  const states: Record<string, string> = {};
  for (const record of rolloutRecords(run.stdout))
    if (record.type === 'workload') states[`${record.namespace}/${record.name}`] = record.state;
  return states;
}

/** Each workload of a report, as `namespace kind/name: N pending`. */
function reported(run: CliRun): string[] {
  return (JSON.parse(run.stdout) as MigrationReport).workloads.map(
    ({ namespace, kind, name, pending }) => `${namespace} ${kind}/${name}: ${pending} pending`,
  );
}

let reporter: string;
let roller: string;
let webhook: ServedWebhook;

beforeAll(async () => {
  const plane = cluster();
  await applyInfra(plane, 'podmutation.agent.cloudpilot.ai/access!=kubeconfig');
  // The rule as a PodMutation (report and rollout read the cluster's) and as a file for the webhook.
  await applyPodMutation(plane, RULE.name, RULE.spec);
  for (const namespace of [BOUND, UNBOUND]) {
    await plane.ensureNamespace(namespace);
    await kubectlObjects(plane, 'create', workloads(namespace));
  }
  for (const namespace of [BOUND, UNBOUND]) {
    await untilRolledOut(plane, namespace, 'deployment/web');
    // kubectl rollout status reads no OnDelete StatefulSet.
    await settled(plane, 'StatefulSet', namespace, 'journal', (status) => status.readyReplicas === 1);
  }
  webhook = await serveAndRegister(plane, { rules: [await ruleFolder(plane, [RULE])] });

  // docs/operations.md, the per-namespace form: the files without their every-namespace bindings, then one
  // RoleBinding each in the namespace being migrated.
  for (const file of ['rbac-report.yaml', 'rbac-rollout.yaml'])
    await kubectlOk(plane, ['apply', '-f', join(INFRA, file), '-l', ALL_NAMESPACES_LABEL]);
  for (const file of ['rbac-report-namespace.yaml', 'rbac-rollout-namespace.yaml'])
    await kubectlOk(plane, ['apply', '-f', join(INFRA, file), '-n', BOUND]);
  await untilAllowed(plane, REPORTER, ['list', 'controllerrevisions.apps', '-n', BOUND]);
  await untilAllowed(plane, ROLLER, ['create', 'pods', '--subresource=eviction', '-n', BOUND]);
  [reporter, roller] = await Promise.all([kubeconfigOf(plane, REPORTER), kubeconfigOf(plane, ROLLER)]);
});

afterAll(async () => webhook?.stop());

describe('the per-namespace grants', () => {
  it('give report -n the namespace bound, with the cluster-scoped reads the files state', async () => {
    const plane = cluster();
    const run = await runPodmutation(['report', '--kubeconfig', reporter, '-n', BOUND, '-o', 'json']);

    expect(run.code, run.stderr).toBe(1);
    expect(reported(run)).toEqual([`${BOUND} Deployment/web: 1 pending`, `${BOUND} StatefulSet/journal: 1 pending`]);
    // Cluster-wide, the report group reads only what has no namespace.
    expect(await canI(plane, REPORTER, ['list', 'podmutations.agent.cloudpilot.ai'])).toBe(true);
    // Listed with the PodMutations, as the sync lists them: never fetched one by one.
    expect(await canI(plane, REPORTER, ['list', 'podplacements.agent.cloudpilot.ai'])).toBe(true);
    expect(await canI(plane, REPORTER, ['get', 'podplacements.agent.cloudpilot.ai'])).toBe(false);
    expect(await canI(plane, REPORTER, ['list', 'runtimeclasses.node.k8s.io'])).toBe(true);
    expect(await canI(plane, REPORTER, ['list', 'pods', '--all-namespaces'])).toBe(false);
    // The capacity: Nodes listed, never fetched one by one or watched (this cluster has no NodePool CRD, for which
    // kubectl answers no; test/real-cluster/capacity-source.test.ts lists NodePools once it is applied).
    for (const resource of ['nodes']) {
      expect(await canI(plane, REPORTER, ['list', resource]), `list ${resource}`).toBe(true);
      for (const verb of ['get', 'watch', 'patch'])
        expect(await canI(plane, REPORTER, [verb, resource]), `${verb} ${resource}`).toBe(false);
    }
  });

  it('refuse report -n in a namespace not bound, naming the namespace and the binding to add', async () => {
    const run = await runPodmutation(['report', '--kubeconfig', reporter, '-n', UNBOUND, '-o', 'json']);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `listing cronjobs.batch in namespace ${UNBOUND} failed: 403 Forbidden: the identity lacks the RBAC permission to list cronjobs in namespace ${UNBOUND}`,
    );
    expect(run.stderr).toContain(
      `bind infra/rbac-report-namespace.yaml (report) or infra/rbac-rollout-namespace.yaml (rollout) in namespace ${UNBOUND}`,
    );
    expect(run.stderr).not.toMatch(/TypeError|\n\s+at /);
  });

  it('refuse report -A, naming the every-namespace binding it needs', async () => {
    const run = await runPodmutation(['report', '--kubeconfig', reporter, '-A', '-o', 'json']);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('listing cronjobs.batch in all namespaces failed: 403 Forbidden');
    expect(run.stderr).toContain(
      'reading every namespace needs a ClusterRoleBinding: that of infra/rbac-report.yaml (report -A)',
    );
  });

  it('refuse rollout -n in a namespace not bound, and rollout -A, before anything is changed', async () => {
    const plane = cluster();
    const generation = async () =>
      (
        await plane.admin.json<{ metadata: { generation: number } }>(
          'GET',
          `/apis/apps/v1/namespaces/${UNBOUND}/deployments/web`,
        )
      ).metadata.generation;
    const before = await generation();

    const elsewhere = await runPodmutation(['rollout', '--kubeconfig', roller, '-n', UNBOUND, '-o', 'json']);
    const everywhere = await runPodmutation(['rollout', '--kubeconfig', roller, '-A', '-o', 'json']);

    expect([elsewhere.code, everywhere.code]).toEqual([2, 2]);
    expect(elsewhere.stderr).toContain(
      `403 Forbidden: the identity lacks the RBAC permission to list cronjobs in namespace ${UNBOUND}`,
    );
    expect(everywhere.stderr).toContain(
      '403 Forbidden: the identity lacks the RBAC permission to list cronjobs in all namespaces',
    );
    expect([rolloutRecords(elsewhere.stdout), rolloutRecords(everywhere.stdout)]).toEqual([[], []]);
    expect(await generation()).toBe(before);
  });

  it('let rollout -n restart the Deployment and evict the OnDelete StatefulSet’s Pod in the namespace bound, to 0 pending', async () => {
    const run = await runPodmutation([
      'rollout',
      '--kubeconfig',
      roller,
      '-n',
      BOUND,
      '-o',
      'json',
      '--timeout',
      '90s',
    ]);

    expect(run.code, run.stderr).toBe(0);
    expect(lastStates(run)).toEqual({ [`${BOUND}/web`]: 'done', [`${BOUND}/journal`]: 'done' });
    const after = await runPodmutation(['report', '--kubeconfig', reporter, '-n', BOUND, '-o', 'json']);
    expect(after.code, after.stderr).toBe(0);
  });

  it('give the sync nothing', async () => {
    const plane = cluster();
    const sync = { user: 'arn:aws:sts::111122223333:assumed-role/podmutation-sync/lambda', group: 'podmutation-sync' };
    for (const args of [
      ['list', 'pods', '-n', BOUND],
      ['list', 'pods', '--all-namespaces'],
      ['create', 'pods', '--subresource=eviction', '-n', BOUND],
    ])
      expect(await canI(plane, sync, args), args.join(' ')).toBe(false);
  });
});

describe('the every-namespace grants', () => {
  beforeAll(async () => {
    const plane = cluster();
    for (const file of ['rbac-report.yaml', 'rbac-rollout.yaml'])
      await kubectlOk(plane, ['apply', '-f', join(INFRA, file)]);
    await untilAllowed(plane, REPORTER, ['list', 'pods', '--all-namespaces']);
    await untilAllowed(plane, ROLLER, ['patch', 'deployments.apps', '--all-namespaces']);
  });

  it('give report -A every namespace', async () => {
    const run = await runPodmutation(['report', '--kubeconfig', reporter, '-A', '-o', 'json']);

    expect(run.code, run.stderr).toBe(1);
    expect(reported(run)).toEqual([
      `${BOUND} Deployment/web: 0 pending`,
      `${BOUND} StatefulSet/journal: 0 pending`,
      `${UNBOUND} Deployment/web: 1 pending`,
      `${UNBOUND} StatefulSet/journal: 1 pending`,
    ]);
  });

  it('give rollout -A every namespace, to 0 pending', async () => {
    const run = await runPodmutation(['rollout', '--kubeconfig', roller, '-A', '-o', 'json', '--timeout', '90s']);

    expect(run.code, run.stderr).toBe(0);
    expect(lastStates(run)).toMatchObject({
      [`${BOUND}/web`]: 'current',
      [`${UNBOUND}/web`]: 'done',
      [`${UNBOUND}/journal`]: 'done',
    });
  });
});
