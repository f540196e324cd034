/**
 * The sync against a real API server, as docs/design.md "Sync and cluster access" sets it up in kubeconfig mode: infra/
 * applied with kustomize, the ServiceAccount token Secret of infra/rbac.yaml's header filled by the real token
 * controller, and `podmutation sync --once` into dynalite with that token. Then the shipped sync function with the
 * migration report, the messages of an identity missing a verb, and the API behaviour the fake API server of
 * test/cluster imitates.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildFunctions } from '../../scripts/build.ts';
import { describeIssues, ruleWarnings, validatePodMutation } from '../../lib/api/index.ts';
import { parseSingleDocument } from '../../lib/rule-files/index.ts';
import { canonicalJson } from '../../lib/json/index.ts';
import { DEFAULT_LIST_PAGE_SIZE } from '../../lib/cluster/access.ts';
import { createPodMutationSource, createWorkloadObjectSource } from '../../lib/cluster/index.ts';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import { createDynamoClient, createSnapshotTable } from '../../lib/store/index.ts';
import type { SyncReport } from '../../lib/sync/index.ts';
import { startFakeAws, type FakeAws } from '../cluster/fake-aws.ts';
import { embeddedMetrics } from '../deploy/lambda-run.ts';
import type { CliRun } from '../support/cli.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import {
  applyInfra,
  applyPodMutation,
  kubectlObjects,
  kubectlOk,
  untilAllowed as untilKubectlAllows,
  untilRolledOut,
} from './kubectl.ts';
import { reportRun, syncOnce } from './podmutation.ts';
import { invokeSyncFunction } from './sync-function.ts';
import { poolAffinity } from './pools.ts';
import { waitFor } from './processes.ts';
import { metricSum } from './webhook.ts';
import { useControlPlane } from './use-control-plane.ts';
import { snapshotsOf, recordsOf } from '../store/support.ts';

const cluster = useControlPlane();

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GROUP = 'agent.cloudpilot.ai';
const PM_PATH = `/apis/${GROUP}/v1alpha1/podmutations`;
const ENFORCEMENT_ANNOTATION = 'podmutation.agent.cloudpilot.ai/enforcement';
const SYNC_NAMESPACE = 'podmutation-system';
const CLUSTER_ID = 'default';
const REGION = 'eu-west-1';
const KUBECONFIG_SECRET_ARN = `arn:aws:secretsmanager:${REGION}:123456789012:secret:podmutation-kubeconfig-AbCdEf`;

/** A PodMutation as the API server returns it. */
interface PodMutation {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name: string;
    readonly generation: number;
    readonly annotations?: Record<string, string>;
  };
  readonly spec: Json;
  readonly status?: {
    readonly conditions?: readonly {
      type: string;
      status: string;
      reason: string;
      message: string;
      lastTransitionTime: string;
      observedGeneration?: number;
    }[];
    readonly observedGeneration?: number;
    readonly lastSyncTime?: string;
    readonly enforcement?: string;
    readonly matchedPods?: number;
    readonly pendingPods?: number;
    readonly lastReportTime?: string;
  };
}

type ClusterRoleRule = { readonly apiGroups: string[]; readonly resources: string[]; readonly verbs: string[] };

let dynamo: EmbeddedDynamo;
let dynamoClient: ReturnType<typeof createDynamoClient>;
/** The kubeconfig of the ServiceAccount podmutation-sync, with the token of its token Secret. */
let syncKubeconfig: string;

async function podMutation(plane: ControlPlane, name: string): Promise<PodMutation> {
  return plane.admin.json<PodMutation>('GET', `${PM_PATH}/${name}`);
}

/** The Secret infra/rbac.yaml's header tells kubeconfig mode to apply, as the YAML it shows. */
function tokenSecretOfTheHeader(rbac: string): string {
  const shown = /^#( +)apiVersion: v1\n(?:#.*\n)*?# +type: kubernetes\.io\/service-account-token$/m.exec(rbac);
  if (shown === null) throw new Error('infra/rbac.yaml shows no ServiceAccount token Secret in its header');
  const indent = shown[1]!.length + 1;
  return shown[0]
    .split('\n')
    .map((line) => line.slice(indent))
    .join('\n');
}

/** The rules of infra/rbac.yaml's ClusterRole podmutation-sync. */
async function syncRoleRules(): Promise<ClusterRoleRule[]> {
  const documents = parseAllDocuments(await readFile(join(ROOT, 'infra', 'rbac.yaml'), 'utf8')).map(
    (document) => document.toJS() as Json,
  );
  const role = documents.find(
    (document) =>
      document.kind === 'ClusterRole' && (document.metadata as { name: string }).name === 'podmutation-sync',
  );
  if (role === undefined) throw new Error('infra/rbac.yaml has no ClusterRole podmutation-sync');
  return role.rules as ClusterRoleRule[];
}

/** `podmutation sync --once` into a table of dynalite, as docs/cli.md's local example runs it. */
async function runSync(
  kubeconfig: string,
  table: string,
): Promise<{ readonly run: CliRun; readonly report: SyncReport }> {
  const { run, report } = await syncOnce([
    '--kubeconfig',
    kubeconfig,
    '--dynamodb-endpoint',
    dynamo.endpoint,
    '--table',
    table,
  ]);
  if (report === undefined)
    throw new Error(`podmutation sync printed no report (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  return { run, report };
}

/** The JSON lines a CLI run logged on stderr. */
function loggedLines(run: CliRun): Json[] {
  return run.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Json);
}

/** A ServiceAccount of podmutation-system bound to a ClusterRole of these rules, and a kubeconfig with a token of it. */
async function identityWith(plane: ControlPlane, name: string, rules: readonly ClusterRoleRule[]): Promise<string> {
  const objects = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: SYNC_NAMESPACE } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: SYNC_NAMESPACE }],
    },
  ];
  await kubectlObjects(plane, 'apply', objects);
  const token = (await kubectlOk(plane, ['create', 'token', name, '-n', SYNC_NAMESPACE])).trim();
  return plane.tokenKubeconfig(name, token);
}

/** Waits until the RBAC authorizer lets the ServiceAccount do what `kubectl auth can-i ARGS` asks: a binding takes effect through an informer. */
function untilAllowed(plane: ControlPlane, serviceAccount: string, args: readonly string[]): Promise<void> {
  return untilKubectlAllows(plane, serviceAccount, [
    ...args,
    '--all-namespaces',
    `--as=system:serviceaccount:${SYNC_NAMESPACE}:${serviceAccount}`,
  ]);
}

beforeAll(async () => {
  const plane = cluster();
  dynamo = await startEmbeddedDynamo();
  dynamoClient = createDynamoClient({ endpoint: dynamo.endpoint });

  // docs/design.md "Sync and cluster access", kubeconfig mode.
  await applyInfra(plane, 'podmutation.agent.cloudpilot.ai/access!=eks-access-entry');
  await kubectlOk(
    plane,
    ['apply', '-f', '-'],
    tokenSecretOfTheHeader(await readFile(join(ROOT, 'infra', 'rbac.yaml'), 'utf8')),
  );
  // The header's command: kubectl -n podmutation-system get secret podmutation-sync-token -o jsonpath='{.data.token}' | base64 -d
  const token = await waitFor('the token controller to fill podmutation-sync-token', async () => {
    const data = await kubectlOk(plane, [
      '-n',
      SYNC_NAMESPACE,
      'get',
      'secret',
      'podmutation-sync-token',
      '-o',
      'jsonpath={.data.token}',
    ]);
    return data === '' ? undefined : Buffer.from(data, 'base64').toString('utf8');
  });
  syncKubeconfig = await plane.tokenKubeconfig('podmutation-sync', token);

  // A valid rule, an audited one, one the CRD keeps but the validator rejects, and one with a misspelt enforcement.
  for (const file of [
    'examples/rules/migrate-legacy-pool.yaml',
    'examples/rules/prefer-arm64-web.yaml',
    'examples/rules/retire-old-zone-taint.yaml',
    'test/infra/corpus/exceptions/misspelt-field.yaml',
  ]) {
    await kubectlOk(plane, ['apply', '-f', join(ROOT, file)]);
  }
  await kubectlOk(plane, ['annotate', 'pm', 'prefer-arm64-web', `${ENFORCEMENT_ANNOTATION}=audit`]);
  await kubectlOk(plane, ['annotate', 'pm', 'retire-old-zone-taint', `${ENFORCEMENT_ANNOTATION}=Audit`]);
});

afterAll(async () => {
  dynamoClient?.destroy();
  await dynamo?.close();
});

describe('podmutation sync --once with the ServiceAccount token of kubeconfig mode', () => {
  const table = 'podmutation-rules';
  let first: { readonly run: CliRun; readonly report: SyncReport };

  beforeAll(async () => {
    first = await runSync(syncKubeconfig, table);
  });

  it('lists and validates every PodMutation and publishes the valid and invalid ones as one snapshot', async () => {
    expect(first.run.code, first.run.stderr).toBe(0);
    expect(first.report).toMatchObject({
      outcome: 'published',
      resources: 4,
      valid: 2,
      invalid: 2,
      statusPatched: 4,
      statusFailed: 0,
    });
    const snapshot = await snapshotsOf({ client: dynamoClient, tableName: table })(CLUSTER_ID).read();
    expect(snapshot?.version).toBe(first.report.version);
    expect(snapshot?.resourceVersion).toBe(first.report.resourceVersion);
    expect(snapshot?.rules.map((rule) => [rule.name, rule.enforcement])).toEqual([
      ['migrate-legacy-pool', 'enforce'],
      ['prefer-arm64-web', 'audit'],
    ]);
    expect(snapshot?.invalid.map((rule) => rule.name)).toEqual(['misspelt-field', 'retire-old-zone-taint']);
  });

  it.each([
    { name: 'migrate-legacy-pool', accepted: 'True', reason: 'Valid', enforcement: 'enforce', issue: undefined },
    { name: 'prefer-arm64-web', accepted: 'True', reason: 'Valid', enforcement: 'audit', issue: undefined },
    {
      name: 'misspelt-field',
      accepted: 'False',
      reason: 'Invalid',
      enforcement: undefined,
      issue: 'spec.workloadSelector.kind: unknown field',
    },
    {
      name: 'retire-old-zone-taint',
      accepted: 'False',
      reason: 'Invalid',
      enforcement: undefined,
      issue: `metadata.annotations["${ENFORCEMENT_ANNOTATION}"]: must be enforce or audit (got "Audit")`,
    },
  ])(
    'writes $name its Accepted condition ($accepted, $reason), observedGeneration and lastSyncTime through the status subresource',
    async ({ name, accepted, reason, enforcement, issue }) => {
      const resource = await podMutation(cluster(), name);
      const condition = resource.status?.conditions?.find(({ type }) => type === 'Accepted');
      expect(condition).toMatchObject({
        status: accepted,
        reason,
        observedGeneration: resource.metadata.generation,
        lastTransitionTime: first.report.listStartedAt,
      });
      expect(resource.status).toMatchObject({
        observedGeneration: resource.metadata.generation,
        lastSyncTime: first.report.listStartedAt,
      });
      expect(resource.status?.enforcement).toBe(enforcement);
      if (issue !== undefined) {
        // The message is the validator's, on the resource as the API server stores it.
        const verdict = validatePodMutation(resource);
        expect(verdict.valid).toBe(false);
        if (!verdict.valid) expect(condition?.message).toBe(describeIssues(verdict.invalid).join('; '));
        expect(condition?.message).toContain(issue);
      }
    },
  );

  it('moves observedGeneration in the next sync after a spec edit, keeping the condition’s transition time', async () => {
    const plane = cluster();
    const before = await podMutation(plane, 'migrate-legacy-pool');
    await kubectlOk(plane, [
      'patch',
      'pm',
      'migrate-legacy-pool',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { priority: 101 } }),
    ]);
    const edited = await podMutation(plane, 'migrate-legacy-pool');
    expect(edited.metadata.generation).toBe(before.metadata.generation + 1);

    const second = await runSync(syncKubeconfig, table);

    expect(second.report).toMatchObject({
      outcome: 'published',
      version: first.report.version! + 1,
      statusPatched: 1,
      statusFailed: 0,
    });
    const after = await podMutation(plane, 'migrate-legacy-pool');
    expect(after.status?.observedGeneration).toBe(edited.metadata.generation);
    const condition = after.status?.conditions?.find(({ type }) => type === 'Accepted');
    expect(condition?.observedGeneration).toBe(edited.metadata.generation);
    expect(condition?.lastTransitionTime).toBe(first.report.listStartedAt);
    expect(after.status?.lastSyncTime).toBe(second.report.listStartedAt);
    const snapshot = await snapshotsOf({ client: dynamoClient, tableName: table })(CLUSTER_ID).read();
    expect(snapshot?.rules.find((rule) => rule.name === 'migrate-legacy-pool')?.priority).toBe(101);
  });

  it('publishes nothing new and writes no status when nothing changed', async () => {
    const resource = await podMutation(cluster(), 'prefer-arm64-web');
    const published = await snapshotsOf({ client: dynamoClient, tableName: table })(CLUSTER_ID).read();

    const again = await runSync(syncKubeconfig, table);

    expect(again.report).toMatchObject({ outcome: 'unchanged', version: published?.version, statusPatched: 0 });
    expect((await podMutation(cluster(), 'prefer-arm64-web')).status).toEqual(resource.status);
  });
});

describe('a sync identity missing one verb of infra/rbac.yaml', () => {
  /** infra/rbac.yaml's ClusterRole without `verb` on `resource`. */
  async function rulesWithout(verb: string, resource: string): Promise<ClusterRoleRule[]> {
    const rules = await syncRoleRules();
    expect(rules.some((rule) => rule.resources.includes(resource) && rule.verbs.includes(verb))).toBe(true);
    return rules
      .map((rule) =>
        rule.resources.includes(resource) ? { ...rule, verbs: rule.verbs.filter((granted) => granted !== verb) } : rule,
      )
      .filter((rule) => rule.verbs.length > 0);
  }

  it('without patch on podmutations/status still publishes, and logs the status writes as forbidden, naming infra/rbac.yaml', async () => {
    const plane = cluster();
    const kubeconfig = await identityWith(
      plane,
      'sync-without-status-patch',
      await rulesWithout('patch', 'podmutations/status'),
    );
    await untilAllowed(plane, 'sync-without-status-patch', ['list', `podmutations.${GROUP}`]);
    // A rule no sync has seen, so that a status write is due.
    await applyPodMutation(plane, 'awaiting-status', {
      enable: true,
      workloadSelector: { namespaces: ['staging'] },
      mutationAdd: { annotations: { 'example.com/seen': 'by-podmutation' } },
    });

    try {
      const { run, report } = await runSync(kubeconfig, 'without-status-patch');

      expect(run.code, run.stderr).toBe(0);
      expect(report).toMatchObject({ outcome: 'published', statusPatched: 0, statusFailed: 1 });
      const snapshot = await snapshotsOf({ client: dynamoClient, tableName: 'without-status-patch' })(
        CLUSTER_ID,
      ).read();
      expect(snapshot?.rules.map((rule) => rule.name)).toContain('awaiting-status');
      const warning = loggedLines(run).find(
        (line) => line['level'] === 'WARN' && String(line['message']).startsWith('status write-back incomplete'),
      );
      const failures = warning?.['failures'] as
        { name: string; errorReason: string; errorMessage: string }[] | undefined;
      expect(failures).toHaveLength(1);
      expect(failures?.[0]).toMatchObject({ name: 'awaiting-status', errorReason: 'forbidden' });
      expect(failures?.[0]?.errorMessage).toContain(
        `patching the status of podmutations.agent.cloudpilot.ai "awaiting-status" failed: 403 Forbidden (the identity of these credentials lacks permission for this request: the sync's grants are infra/rbac.yaml, report's infra/rbac-report.yaml)`,
      );
      expect(failures?.[0]?.errorMessage).toContain('cannot patch resource "podmutations/status"');
      expect((await podMutation(plane, 'awaiting-status')).status).toBeUndefined();
    } finally {
      await kubectlOk(plane, ['delete', 'pm', 'awaiting-status']);
    }
  });

  it('without list on podmutations fails, publishes nothing and records the documented message', async () => {
    const plane = cluster();
    const kubeconfig = await identityWith(plane, 'sync-without-list', await rulesWithout('list', 'podmutations'));
    await untilAllowed(plane, 'sync-without-list', ['patch', `podmutations.${GROUP}`, '--subresource=status']);

    const { run, report } = await runSync(kubeconfig, 'without-list');

    expect(run.code).toBe(1);
    expect(report).toMatchObject({ outcome: 'failed', failedStep: 'list', resources: 0, statusPatched: 0 });
    expect(report.error).toContain(
      "listing podmutations.agent.cloudpilot.ai failed: 403 Forbidden (the identity of these credentials lacks permission for this request: the sync's grants are infra/rbac.yaml, report's infra/rbac-report.yaml)",
    );
    expect(report.error).toContain(
      `User "system:serviceaccount:${SYNC_NAMESPACE}:sync-without-list" cannot list resource "podmutations"`,
    );
    expect(await snapshotsOf({ client: dynamoClient, tableName: 'without-list' })(CLUSTER_ID).read()).toBeUndefined();
    expect(
      await recordsOf({ client: dynamoClient, tableName: 'without-list' })(CLUSTER_ID).readSyncStatus(),
    ).toMatchObject({
      lastStatus: 'failed',
      lastError: report.error,
    });
  });
});

describe('the shipped sync function with REPORT_INTERVAL_MINUTES=1 and the kubeconfig in Secrets Manager', () => {
  const table = 'podmutation-lambda-rules';
  let taskRoot: string;
  let aws: FakeAws;

  /** The sync bundle invoked by hand (one sync) in a fresh process with the environment of kubeconfig mode. */
  function invokeSync(): ReturnType<typeof invokeSyncFunction> {
    return invokeSyncFunction({
      taskRoot,
      secretsManagerUrl: aws.url,
      kubeconfigSecretArn: KUBECONFIG_SECRET_ARN,
      dynamoEndpoint: dynamo.endpoint,
      tableName: table,
      clusterId: CLUSTER_ID,
      reportIntervalMinutes: 1,
    });
  }

  /** The values a metric took in the EMF documents of an invocation. */
  function metricValues(
    lines: readonly string[],
    name: string,
    dimensions: Readonly<Record<string, string>> = {},
  ): unknown[] {
    return embeddedMetrics(lines)
      .filter(
        (document) => name in document && Object.entries(dimensions).every(([key, value]) => document[key] === value),
      )
      .map((document) => document[name]);
  }

  beforeAll(async () => {
    const plane = cluster();
    const outdir = await mkdtemp(join(plane.dir, 'functions-'));
    await buildFunctions({ outdir });
    taskRoot = join(outdir, 'sync');
    aws = await startFakeAws();
    aws.secrets.set(KUBECONFIG_SECRET_ARN, await readFile(syncKubeconfig, 'utf8'));
    await createSnapshotTable(dynamoClient, table);

    // Pods made by the real ReplicaSet controller: checkout pinned to the legacy pool (migrate-legacy-pool), both frontends (prefer-arm64-web).
    await plane.ensureNamespace('production');
    const legacy = poolAffinity('legacy');
    const deployment = (name: string, replicas: number, affinity: Json | undefined) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: 'production' },
      spec: {
        replicas,
        selector: { matchLabels: { 'app.kubernetes.io/name': name } },
        template: {
          metadata: { labels: { 'app.kubernetes.io/name': name, 'app.kubernetes.io/component': 'frontend' } },
          spec: {
            containers: [{ name: 'app', image: `registry.example.com/${name}:1` }],
            ...(affinity === undefined ? {} : { affinity }),
          },
        },
      },
    });
    await kubectlObjects(plane, 'create', [deployment('checkout', 2, legacy), deployment('web', 1, undefined)]);
    for (const name of ['checkout', 'web']) await untilRolledOut(plane, 'production', `deployment/${name}`);
  });

  afterAll(async () => {
    await aws?.close();
  });

  it('with people’s infra/rbac-report.yaml alone publishes, and logs and counts the failed report without recording it', async () => {
    // The report's grant for people, in both forms, is not the sync's: its report still has no access.
    await kubectlOk(cluster(), ['apply', '-f', join(ROOT, 'infra', 'rbac-report.yaml')]);
    const { report, lines } = await invokeSync();

    expect(report).toMatchObject({ outcome: 'published', valid: 2, invalid: 2, statusFailed: 0 });
    expect(report.progress?.error).toContain(
      'listing cronjobs.batch in all namespaces failed: 403 Forbidden: the identity lacks the RBAC permission to list cronjobs in all namespaces',
    );
    expect(report.progress?.error).toContain("infra/rbac-sync-report.yaml (the sync's report)");
    expect(metricValues(lines, 'ReportErrors')).toEqual([1]);
    expect(
      (await recordsOf({ client: dynamoClient, tableName: table })(CLUSTER_ID).readSyncStatus())?.lastReportAt,
    ).toBeUndefined();
    expect((await podMutation(cluster(), 'migrate-legacy-pool')).status?.matchedPods).toBeUndefined();
  });

  it('with infra/rbac-sync-report.yaml writes each valid rule’s matchedPods and pendingPods as podmutation report counts them', async () => {
    const plane = cluster();
    // docs/operations.md, "Progress on each rule's status", in kubeconfig mode.
    await kubectlOk(plane, [
      'apply',
      '-f',
      join(ROOT, 'infra', 'rbac-sync-report.yaml'),
      '-l',
      'podmutation.agent.cloudpilot.ai/access!=eks-access-entry',
    ]);
    await untilAllowed(plane, 'podmutation-sync', ['list', 'cronjobs.batch']);

    const { report, lines } = await invokeSync();

    const pods = (await plane.admin.json<{ items: Json[] }>('GET', '/api/v1/namespaces/production/pods')).items;
    const checkoutPods = pods.filter(
      (pod) => (pod.metadata as { labels: Record<string, string> }).labels['app.kubernetes.io/name'] === 'checkout',
    );
    expect(report.progress).toMatchObject({ pods: pods.length, pendingPods: checkoutPods.length, statusFailed: 0 });
    expect(report.progress?.error).toBeUndefined();
    const reportAt = (await recordsOf({ client: dynamoClient, tableName: table })(CLUSTER_ID).readSyncStatus())
      ?.lastReportAt;
    expect(reportAt).toBeDefined();

    // The same counts as the CLI's report over the cluster's own PodMutations.
    const cli = await reportRun(plane, ['-A', '-o', 'json']);
    expect(cli.code, cli.stderr).toBe(1);
    const counted = (JSON.parse(cli.stdout) as { rules: { name: string; matched: number; pending: number }[] }).rules;
    expect(counted.map(({ name }) => name).sort()).toEqual(['migrate-legacy-pool', 'prefer-arm64-web']);
    for (const rule of counted) {
      const { status } = await podMutation(plane, rule.name);
      expect(status, rule.name).toMatchObject({
        matchedPods: rule.matched,
        pendingPods: rule.pending,
        lastReportTime: reportAt,
      });
    }
    // No webhook runs here, so every legacy Pod is pending; the audited rule changes no Pod.
    expect((await podMutation(plane, 'migrate-legacy-pool')).status).toMatchObject({
      matchedPods: checkoutPods.length,
      pendingPods: checkoutPods.length,
    });
    expect((await podMutation(plane, 'prefer-arm64-web')).status).toMatchObject({
      matchedPods: pods.length,
      pendingPods: 0,
    });
    for (const invalid of ['misspelt-field', 'retire-old-zone-taint'])
      expect((await podMutation(plane, invalid)).status?.matchedPods).toBeUndefined();

    expect(metricValues(lines, 'PendingPodsTotal')).toEqual([checkoutPods.length]);
    expect(metricValues(lines, 'PendingPods', { rule: 'migrate-legacy-pool' })).toEqual([checkoutPods.length]);
    expect(metricValues(lines, 'PendingPods', { rule: 'prefer-arm64-web' })).toEqual([]);
  });

  it('shows the counts in the MATCHED and PENDING columns of kubectl get pm', async () => {
    const table = (await kubectlOk(cluster(), ['get', 'pm']))
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/));
    const [header = [], ...rows] = table;
    const column = (row: readonly string[], name: string) => row[header.indexOf(name)];
    const row = (name: string) => rows.find((cells) => cells[0] === name) ?? [];
    for (const name of ['migrate-legacy-pool', 'prefer-arm64-web']) {
      const { status } = await podMutation(cluster(), name);
      expect([column(row(name), 'MATCHED'), column(row(name), 'PENDING')], name).toEqual([
        String(status?.matchedPods),
        String(status?.pendingPods),
      ]);
    }
  });
});

describe('a PodMutation whose tolerationSeconds is int64’s maximum, as the CRD allows', () => {
  const manifest = (seconds: string) => `apiVersion: ${GROUP}/v1alpha1
kind: PodMutation
metadata:
  name: drain-tolerant
spec:
  enable: true
  workloadSelector:
    namespaces: [production]
  mutationAdd:
    tolerations:
      - key: example.com/drain
        operator: Exists
        effect: NoExecute
        tolerationSeconds: ${seconds}
`;

  it('is stored by the API server, synced as valid, and published with every digit', async () => {
    const plane = cluster();
    await kubectlOk(plane, ['apply', '-f', '-'], manifest('9223372036854775807'));
    try {
      const stored = await plane.admin.request('GET', `${PM_PATH}/drain-tolerant`);
      expect(stored.text).toContain('"tolerationSeconds":9223372036854775807');

      const { run, report } = await runSync(syncKubeconfig, 'int64');

      expect(run.code, run.stderr).toBe(0);
      const snapshot = await snapshotsOf({ client: dynamoClient, tableName: 'int64' })(CLUSTER_ID).read();
      const rule = snapshot?.rules.find(({ name }) => name === 'drain-tolerant');
      expect(canonicalJson(rule?.mutationAdd.tolerations)).toContain('"tolerationSeconds":9223372036854775807');
      expect(report.invalid).toBe(snapshot?.invalid.length);
      const condition = (await podMutation(plane, 'drain-tolerant')).status?.conditions?.find(
        ({ type }) => type === 'Accepted',
      );
      expect(condition).toMatchObject({ status: 'True', reason: 'Valid' });
    } finally {
      await kubectlOk(plane, ['delete', 'pm', 'drain-tolerant']);
    }
  });

  it('is refused by the API server one past int64’s maximum, as the validator refuses it', async () => {
    const text = manifest('9223372036854775808');

    const refused = await cluster().kubectl(['apply', '-f', '-'], { input: text });

    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('spec.mutationAdd.tolerations[0].tolerationSeconds in body must be of type int64');
    const verdict = validatePodMutation(parseSingleDocument(text, 'drain-tolerant.yaml'));
    expect(verdict.valid ? [] : verdict.invalid.issues).toEqual([
      {
        field: 'spec.mutationAdd.tolerations[0].tolerationSeconds',
        reason: 'must be an integer from -9223372036854775808 to 9223372036854775807 (got 9223372036854775808)',
      },
    ]);
  });
});

describe('a PodMutation whose kinds are near misses of workload kinds', () => {
  it("is synced as valid, its Accepted message followed by validate's warnings naming the kinds meant", async () => {
    const plane = cluster();
    await kubectlOk(
      plane,
      ['apply', '-f', '-'],
      `apiVersion: ${GROUP}/v1alpha1
kind: PodMutation
metadata:
  name: misspelt-kinds
spec:
  enable: true
  workloadSelector:
    kinds: [deployment, Deploymnet, Rollout]
  mutationAdd:
    annotations:
      example.com/selected: "yes"
`,
    );
    try {
      const { run } = await runSync(syncKubeconfig, 'kind-typos');

      expect(run.code, run.stderr).toBe(0);
      const stored = await podMutation(plane, 'misspelt-kinds');
      const verdict = validatePodMutation(stored);
      if (!verdict.valid) throw new Error('the rule should be valid');
      const warnings = describeIssues({ name: 'misspelt-kinds', issues: ruleWarnings(verdict.rule, stored) });
      expect(warnings).toEqual([
        expect.stringContaining('kinds[0]: "deployment" is Deployment in another case'),
        expect.stringContaining('kinds[1]: "Deploymnet" looks like a misspelling of Deployment'),
      ]);
      const condition = stored.status?.conditions?.find(({ type }) => type === 'Accepted');
      expect(condition).toMatchObject({
        status: 'True',
        reason: 'Valid',
        message: [
          'the rule passed validation and is published to admission',
          ...warnings.map((line) => `warning: ${line}`),
        ].join('; '),
      });
    } finally {
      await kubectlOk(plane, ['delete', 'pm', 'misspelt-kinds']);
    }
  });
});

describe('what the fake API server of test/cluster claims, checked once against the real one', () => {
  it('pages a list with limit and continue, so that a list in pages of one still returns every PodMutation once', async () => {
    const plane = cluster();
    const names = (await kubectlOk(plane, ['get', 'pm', '-o', 'name']))
      .trim()
      .split('\n')
      .map((line) => line.replace(/^[^/]+\//, ''));
    expect(names.length).toBeGreaterThan(2);
    const firstPage = await plane.admin.json<{
      metadata: { continue?: string; remainingItemCount?: number };
      items: unknown[];
    }>('GET', PM_PATH, { query: { limit: '1' } });
    expect(firstPage.items).toHaveLength(1);
    expect(firstPage.metadata.continue).toEqual(expect.any(String));
    expect(firstPage.metadata.remainingItemCount).toBe(names.length - 1);

    // The sync's own list, with the page size option of createPodMutationSource (500 by default, as kubectl asks).
    const list = await createPodMutationSource(
      { mode: 'kubeconfigFile', path: syncKubeconfig },
      { pageSize: 1 },
    ).listPodMutations();

    expect(list.items.map((item) => (item as PodMutation).metadata.name)).toEqual(names);
  });

  it("pages the CLI sync's own list of more PodMutations than its default page of 500", async () => {
    const plane = cluster();
    const listed = (await plane.admin.json<{ items: unknown[] }>('GET', PM_PATH)).items.length;
    const added = DEFAULT_LIST_PAGE_SIZE + 1 - listed + 2;
    const names = Array.from({ length: added }, (_, index) => `bulk-${String(index).padStart(3, '0')}`);
    // Eight at a time: each create runs the CRD's schema and CEL validation.
    for (let start = 0; start < names.length; start += 8) {
      await Promise.all(
        names.slice(start, start + 8).map((name) =>
          plane.admin.json('POST', PM_PATH, {
            body: {
              apiVersion: `${GROUP}/v1alpha1`,
              kind: 'PodMutation',
              metadata: { name },
              spec: {
                enable: true,
                workloadSelector: { namespaces: ['bulk'], names: [name] },
                mutationAdd: { annotations: { 'example.com/bulk': name } },
              },
            },
          }),
        ),
      );
    }

    const lists = async () =>
      metricSum(await plane.metrics(), 'apiserver_request_total', { resource: 'podmutations', verb: 'LIST' });
    const listsBefore = await lists();

    const { run, report } = await runSync(syncKubeconfig, 'bulk');

    expect(run.code, run.stderr).toBe(0);
    expect(report.resources).toBe(listed + added);
    expect(report.resources).toBeGreaterThan(DEFAULT_LIST_PAGE_SIZE);
    // Two pages, each a LIST request of the API server (at least: the controller manager's informers list now and then too).
    expect((await lists()) - listsBefore).toBeGreaterThanOrEqual(2);
    const snapshot = await snapshotsOf({ client: dynamoClient, tableName: 'bulk' })(CLUSTER_ID).read();
    const published = new Set([...(snapshot?.rules ?? []), ...(snapshot?.invalid ?? [])].map((rule) => rule.name));
    expect(published.size).toBe(listed + added);
    for (const name of names) expect(published.has(name), name).toBe(true);
  });

  it('sends PodMutation list items with apiVersion and kind (the validator needs them), and built-in list items without', async () => {
    const plane = cluster();
    const podMutations = await plane.admin.json<{ items: Json[] }>('GET', PM_PATH);
    expect(podMutations.items.map(({ apiVersion, kind }) => [apiVersion, kind])).toEqual(
      podMutations.items.map(() => [`${GROUP}/v1alpha1`, 'PodMutation']),
    );
    for (const path of ['/api/v1/pods', '/apis/apps/v1/replicasets', '/apis/apps/v1/deployments']) {
      const list = await plane.admin.json<{ items: Json[] }>('GET', path);
      expect(list.items.length, path).toBeGreaterThan(0);
      for (const item of list.items) expect([item.apiVersion, item.kind], path).toEqual([undefined, undefined]);
    }

    // What the report's source makes of them: each item with its apiVersion and kind.
    const objects = createWorkloadObjectSource({ mode: 'kubeconfigFile', path: syncKubeconfig });
    const pods: Json[] = [];
    for await (const page of objects.pages('Pod', 'production')) pods.push(...(page as Json[]));
    expect(pods.length).toBeGreaterThan(0);
    for (const pod of pods) expect([pod.apiVersion, pod.kind]).toEqual(['v1', 'Pod']);
  });

  it('answers 404 for the rollouts collection of a cluster without the Argo Rollouts CRD, which the report reads as no Rollouts', async () => {
    const plane = cluster();
    expect((await plane.admin.request('GET', '/apis/argoproj.io/v1alpha1/rollouts')).status).toBe(404);
    const pages: unknown[] = [];
    for await (const page of createWorkloadObjectSource({ mode: 'kubeconfigFile', path: syncKubeconfig }).pages(
      'Rollout',
    ))
      pages.push(page);
    expect(pages).toEqual([]);
  });

  it('merge-patches the status subresource: status alone changes, null removes a member, an array is replaced whole', async () => {
    const plane = cluster();
    await applyPodMutation(plane, 'patch-target', {
      enable: true,
      priority: 5,
      workloadSelector: { namespaces: ['staging'] },
      mutationAdd: { annotations: { 'example.com/a': 'b' } },
    });
    const before = await podMutation(plane, 'patch-target');
    const source = createPodMutationSource({ mode: 'kubeconfigFile', path: syncKubeconfig });
    const at = '2026-12-01T10:00:00Z';
    const accepted = {
      type: 'Accepted',
      status: 'True',
      reason: 'Valid',
      message: 'ok',
      lastTransitionTime: at,
      observedGeneration: before.metadata.generation,
    };
    const other = { type: 'Reviewed', status: 'True', reason: 'ByHand', message: 'kept', lastTransitionTime: at };

    try {
      await source.patchStatus('patch-target', {
        conditions: [accepted, other],
        enforcement: 'audit',
        lastSyncTime: at,
        observedGeneration: before.metadata.generation,
      });
      const patched = await podMutation(plane, 'patch-target');
      expect(patched.spec).toEqual(before.spec);
      expect(patched.metadata.generation).toBe(before.metadata.generation);
      expect(patched.status).toEqual({
        conditions: [accepted, other],
        enforcement: 'audit',
        lastSyncTime: at,
        observedGeneration: before.metadata.generation,
      });

      await source.patchStatus('patch-target', { conditions: [accepted], enforcement: null });
      expect((await podMutation(plane, 'patch-target')).status).toEqual({
        conditions: [accepted],
        lastSyncTime: at,
        observedGeneration: before.metadata.generation,
      });

      // A merge patch of the subresource that names spec too: the API server keeps the spec as it was.
      const answer = await plane.admin.request('PATCH', `${PM_PATH}/patch-target/status`, {
        body: { spec: { priority: 7 }, status: { lastSyncTime: '2026-12-01T10:05:00Z' } },
        contentType: 'application/merge-patch+json',
      });
      expect(answer.status).toBe(200);
      const after = await podMutation(plane, 'patch-target');
      expect(after.spec).toEqual(before.spec);
      expect(after.metadata.generation).toBe(before.metadata.generation);
      expect(after.status?.lastSyncTime).toBe('2026-12-01T10:05:00Z');
    } finally {
      await kubectlOk(plane, ['delete', 'pm', 'patch-target']);
    }
  });
});
