/** `podmutation report`: what a rollout would change, offline from kubectl's JSON and from a cluster. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import type { MigrationReport } from '../../lib/report/index.ts';
import {
  startFakeApiServer,
  writeKubeconfig,
  type FakeApiServer,
  type PodMutationInput,
} from '../cluster/fake-api-server.ts';
import {
  clusterList,
  ledgerWith,
  MOVE_LEDGER,
  rulePaths,
  serverObjects,
  writeTemporary,
  type KubectlList,
} from '../report/support.ts';
import { fitCaveatLine } from '../../lib/cli/options/capacity.ts';
import { runPodmutationInProcess } from '../support/cli.ts';
import { fixturePath } from '../support/fixtures.ts';

let objects: string;
let list: KubectlList;

// The Nodes and NodePools of the fixture cluster, as kubectl get nodes,nodepools -o yaml prints them.
const CAPACITY = fixturePath('capacity/kubectl-get-nodes-nodepools.yaml');

/** The capacity fixture's List. */
function capacityList(): KubectlList {
  return parseAllDocuments(readFileSync(CAPACITY, 'utf8'))[0]!.toJS() as KubectlList;
}

beforeAll(async () => {
  list = await clusterList();
  objects = writeTemporary('cluster.json', list);
});

function rulesArgs(migrate: 'as-rolled-out' | 'changed' = 'as-rolled-out'): string[] {
  return rulePaths(migrate).flatMap((path) => ['--rules', path]);
}

/** The report of a run, whose exit code says whether a rollout would change something (1) or nothing (0). */
async function reportJson(args: readonly string[]): Promise<MigrationReport> {
  const run = await runPodmutationInProcess(['report', ...args, '-o', 'json']);
  expect(run.stderr).toBe('');
  const report = JSON.parse(run.stdout) as MigrationReport;
  expect(run.code).toBe(report.totals.pending + report.totals.denied > 0 ? 1 : 0);
  return report;
}

// Without --capacity only a Pod's own contradictions are found: the others' fit is not judged.
const NOT_JUDGED = { kind: 'unknown', reason: 'not judged: no capacity given' } as const;

const EXPECTED_JSON: MigrationReport = {
  rules: [
    { name: 'tag-payments', enforcement: 'enforce', matched: 1, current: 0, pending: 1, unschedulable: 0 },
    { name: 'fan-out-zones', enforcement: 'enforce', matched: 2, current: 0, pending: 0, unschedulable: 0 },
    { name: 'batch-to-spot-pool', enforcement: 'enforce', matched: 1, current: 0, pending: 1, unschedulable: 0 },
    { name: 'migrate-legacy-pool', enforcement: 'enforce', matched: 5, current: 2, pending: 3, unschedulable: 0 },
    { name: 'audit-spot-checkout', enforcement: 'audit', matched: 2, current: 0, pending: 0, unschedulable: 0 },
  ],
  workloads: [
    {
      namespace: 'batch',
      kind: 'CronJob',
      name: 'nightly-report',
      pods: 1,
      current: 0,
      pending: 1,
      denied: 0,
      rules: ['batch-to-spot-pool'],
      change:
        'nodeSelector: -example.com/node-pool=batch-ondemand +example.com/node-pool=batch-spot; tolerations: +example.com/spot:NoSchedule op=Exists',
      fit: NOT_JUDGED,
    },
    {
      namespace: 'production',
      kind: 'Deployment',
      name: 'checkout',
      pods: 2,
      current: 2,
      pending: 0,
      denied: 0,
      rules: ['migrate-legacy-pool', 'audit-spot-checkout'],
      change: '',
      fit: NOT_JUDGED,
    },
    {
      namespace: 'production',
      kind: 'Deployment',
      name: 'web',
      pods: 2,
      current: 0,
      pending: 2,
      denied: 0,
      rules: ['migrate-legacy-pool'],
      change:
        'required node affinity (terms ORed): -{example.com/node-pool In [legacy], kubernetes.io/arch In [amd64]} +{example.com/node-pool In [merged], kubernetes.io/arch In [amd64]}; annotations: +example.com/migration: merged-pool',
      fit: NOT_JUDGED,
    },
    {
      namespace: 'production',
      kind: 'Pod',
      name: 'toolbox',
      pods: 1,
      current: 0,
      pending: 1,
      denied: 0,
      rules: ['tag-payments'],
      change: 'annotations: +example.com/cost-center: payments',
      fit: NOT_JUDGED,
    },
    {
      namespace: 'production',
      kind: 'Rollout',
      name: 'storefront',
      pods: 1,
      current: 0,
      pending: 1,
      denied: 0,
      rules: ['migrate-legacy-pool'],
      change:
        'required node affinity (terms ORed): -{example.com/node-pool In [legacy]} +{example.com/node-pool In [merged]}; annotations: +example.com/migration: merged-pool',
      fit: NOT_JUDGED,
    },
    {
      namespace: 'production',
      kind: 'StatefulSet',
      name: 'ledger',
      pods: 2,
      current: 0,
      pending: 0,
      denied: 2,
      rules: ['fan-out-zones'],
      change:
        'denied: PodMutation "fan-out-zones": required node selector terms after combining would be 72, above the limit of 64',
    },
  ],
  totals: { pods: 11, unaffected: 2, current: 2, pending: 5, denied: 2 },
};

/** The JSON types of a value's fields, recursively: the shape docs/operations.md documents. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, shapeOf(field)]));
  return typeof value;
}

const RULE_SHAPE = {
  name: 'string',
  enforcement: 'string',
  matched: 'number',
  current: 'number',
  pending: 'number',
  unschedulable: 'number',
};
const WORKLOAD_SHAPE = {
  namespace: 'string',
  kind: 'string',
  name: 'string',
  pods: 'number',
  current: 'number',
  pending: 'number',
  denied: 'number',
  change: 'string',
};

describe('podmutation report --objects', () => {
  it('prints the documented JSON shape: exactly these keys, in this order, of these types', async () => {
    const report = await reportJson(['--objects', objects, ...rulesArgs()]);

    expect(Object.keys(report)).toEqual(['rules', 'workloads', 'totals']);
    for (const rule of report.rules)
      expect([Object.keys(rule), shapeOf(rule)]).toEqual([Object.keys(RULE_SHAPE), RULE_SHAPE]);
    for (const workload of report.workloads) {
      expect(Object.keys(workload)).toEqual([
        'namespace',
        'kind',
        'name',
        'pods',
        'current',
        'pending',
        'denied',
        'rules',
        'change',
        ...(workload.fit === undefined ? [] : ['fit']),
      ]);
      expect(shapeOf({ ...workload, rules: undefined })).toEqual({
        ...WORKLOAD_SHAPE,
        rules: 'undefined',
        ...(workload.fit === undefined ? {} : { fit: { kind: 'string', reason: 'string' } }),
      });
      expect(workload.rules.every((name) => typeof name === 'string')).toBe(true);
    }
    expect(shapeOf(report.totals)).toEqual({
      pods: 'number',
      unaffected: 'number',
      current: 'number',
      pending: 'number',
      denied: 'number',
    });
  });

  it('reports every verdict of the fixture cluster: current, pending, denied, unaffected, audited', async () => {
    expect(await reportJson(['--objects', objects, ...rulesArgs()])).toEqual(EXPECTED_JSON);
  });

  it('finds the Deployment pending once its rule changed what it adds', async () => {
    const report = await reportJson(['--objects', objects, ...rulesArgs('changed')]);

    expect(report.workloads.find((item) => item.name === 'checkout')).toMatchObject({
      current: 0,
      pending: 2,
      change: expect.stringContaining('+{example.com/node-pool In [merged-2024]') as unknown,
    });
  });

  it('prints the same data as aligned tables by default', async () => {
    const run = await runPodmutationInProcess(['report', '--objects', objects, ...rulesArgs()]);

    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'RULE                 ENFORCEMENT  MATCHED  CURRENT  PENDING  UNSCHEDULABLE',
      'tag-payments         enforce      1        0        1        0',
      'fan-out-zones        enforce      2        0        0        0',
    ]);
    expect(lines.find((line) => line.includes(' checkout '))).toMatch(
      /^production {2}Deployment {3}checkout {8}2 {5}2 {8}0 {8}0 {7}migrate-legacy-pool,audit-spot-checkout {2}- +not judged: no capacity given$/,
    );
    expect(lines.slice(-2)).toEqual([
      'capacity: none given (--capacity FILE); where Pods fit is judged on their own contradictions only (nodeSelector against required terms)',
      fitCaveatLine(),
    ]);
    expect(lines.slice(-5, -3)).toEqual([
      'PODS  UNAFFECTED  CURRENT  PENDING  DENIED',
      '11    2           2        5        2',
    ]);
  });

  it('prints the commands that roll out the pending workloads, and what to recreate by hand', async () => {
    const run = await runPodmutationInProcess(['report', '--objects', objects, ...rulesArgs(), '--restart-commands']);

    expect(run).toEqual({
      code: 1,
      stdout: [
        '# recreate by hand: CronJob batch/nightly-report (1 pending Pod)',
        'kubectl rollout restart deployment/web -n production',
        '# recreate by hand: Pod production/toolbox (1 pending Pod)',
        'kubectl patch rollouts.argoproj.io/storefront -n production --type merge -p "{\\"spec\\":{\\"restartAt\\":\\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\\"}}"',
        '',
      ].join('\n'),
      stderr: '',
    });
  });

  it('prints evictions, not a rollout restart, for an OnDelete StatefulSet', async () => {
    const onDelete = ledgerWith(structuredClone(list), { type: 'OnDelete' });
    const moveLedger = writeTemporary('move-ledger.yaml', stringify(MOVE_LEDGER));

    const run = await runPodmutationInProcess([
      'report',
      '--objects',
      writeTemporary('on-delete.json', onDelete),
      '--rules',
      moveLedger,
      '--restart-commands',
    ]);

    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n').filter((line) => line.includes('ledger'));
    expect(lines[0]).toMatch(/^# StatefulSet production\/ledger: its updateStrategy \(OnDelete, or a partition\)/);
    expect(
      lines.slice(1).map((line) => /pods\/(ledger-\d)\/eviction|get pod (ledger-\d)/.exec(line)?.slice(1).join('')),
    ).toEqual(['ledger-1', 'ledger-1', 'ledger-0', 'ledger-0']);
    expect(lines[1]).toContain('"preconditions":{"uid":"8a0c2e4a-6c8e-4a0c-8e4a-6c8e0a2c4e71"}');
  });

  it('limits the report to one namespace', async () => {
    const report = await reportJson(['--objects', objects, ...rulesArgs(), '--namespace', 'batch']);

    expect(report.totals).toEqual({ pods: 1, unaffected: 0, current: 0, pending: 1, denied: 0 });
  });

  it('reads the objects as YAML documents too', async () => {
    const yaml = list.items.map((item) => stringify(item)).join('---\n');
    const report = await reportJson(['--objects', writeTemporary('cluster.yaml', yaml), ...rulesArgs()]);

    expect(report).toEqual(EXPECTED_JSON);
  });

  it('exits 0 when a rollout would change nothing: the batch CronJob with its rule audited', async () => {
    const run = await runPodmutationInProcess([
      'report',
      '--objects',
      objects,
      ...rulesArgs(),
      '--enforcement',
      'audit',
      '--namespace',
      'batch',
      '-o',
      'json',
    ]);

    expect((JSON.parse(run.stdout) as MigrationReport).totals).toEqual({
      pods: 1,
      unaffected: 0,
      current: 1,
      pending: 0,
      denied: 0,
    });
    expect(run.code).toBe(0);
  });

  it('exits 1 when a rollout would change some Pod, as kubectl diff does for a difference', async () => {
    const run = await runPodmutationInProcess(['report', '--objects', objects, ...rulesArgs(), '--namespace', 'batch']);

    expect(run.code).toBe(1);
  });

  it('audits every rule with --enforcement audit', async () => {
    const report = await reportJson(['--objects', objects, ...rulesArgs(), '--enforcement', 'audit']);

    expect(report.rules.map((rule) => rule.enforcement)).toEqual(['audit', 'audit', 'audit', 'audit', 'audit']);
  });

  it('skips an invalid rule with a line on stderr and still reports', async () => {
    const run = await runPodmutationInProcess([
      'report',
      '--objects',
      objects,
      '--rules',
      fixturePath('rules/invalid'),
      '-o',
      'json',
    ]);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('invalid rule skipped: PodMutation "force-spot"');
    expect((JSON.parse(run.stdout) as MigrationReport).totals.pods).toBe(11);
  });
});

describe('podmutation report, bad usage and input', () => {
  it.each([
    [
      '--objects without --rules',
      ['--objects', 'cluster.json'],
      'podmutation report: report --objects needs --rules PATH: a file of objects holds no PodMutations',
    ],
    [
      'neither --objects nor a kubeconfig',
      ['--rules', 'r.yaml'],
      'podmutation report: report needs --objects FILE (a kubectl get -o json List) or the kubeconfig of a cluster: --kubeconfig FILE is not given and $KUBECONFIG and $HOME are not set\n',
    ],
    [
      'both --objects and --kubeconfig',
      ['--objects', 'a', '--kubeconfig', 'b', '--rules', 'r'],
      "podmutation report: option '--objects <file>' cannot be used with option '--kubeconfig <file>'",
    ],
    [
      '--context with --objects',
      ['--objects', 'a', '--rules', 'r', '--context', 'c'],
      'podmutation report: --context goes with the cluster, not --objects',
    ],
    [
      'an unknown output format',
      ['--objects', 'a', '--rules', 'r', '-o', 'xml'],
      "podmutation report: option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are table, json, yaml.",
    ],
    [
      '--restart-commands with -o json',
      ['--objects', 'a', '--rules', 'r', '-o', 'json', '--restart-commands'],
      'podmutation report: --restart-commands prints shell commands instead of the report',
    ],
    [
      'a namespace that is no namespace name',
      ['--objects', 'a', '--rules', 'r', '--namespace', 'Bad_NS'],
      'podmutation report: --namespace "Bad_NS" is not a namespace name',
    ],
    ['an unknown flag', ['--objects', 'a', '--rules', 'r', '--watch'], "podmutation report: unknown option '--watch'"],
    [
      'a misspelt flag, naming the closest',
      ['--object', 'a', '--rules', 'r'],
      "podmutation report: unknown option '--object'\n(Did you mean --objects?)",
    ],
  ])('exits 2 for %s', async (_, args, message) => {
    const run = await runPodmutationInProcess(['report', ...args]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe('');
  });

  it('exits 2 naming the field of an object that is not well formed', async () => {
    const broken = structuredClone(list);
    const index = broken.items.findIndex((item) => item.kind === 'Deployment');
    (broken.items[index]!.spec as Record<string, unknown>).template = 'web';
    const path = writeTemporary('broken.json', broken);

    const run = await runPodmutationInProcess(['report', '--objects', path, ...rulesArgs()]);

    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toBe(
      `podmutation report: ${path}: items[${index}].spec.template: expected an object (the Pod template), got a string\n`,
    );
  });

  it('exits 2 naming the field of a running Pod that is not well formed', async () => {
    const broken = structuredClone(list);
    (broken.items[2]!.spec as Record<string, unknown>).tolerations = [{ key: 7 }];
    const path = writeTemporary('broken.json', broken);

    const run = await runPodmutationInProcess(['report', '--objects', path, ...rulesArgs()]);

    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `podmutation report: ${path}: items[2].spec.tolerations[0].key: expected a string, got a number\n`,
    );
  });

  it('exits 2 naming the document of a YAML stream', async () => {
    const path = writeTemporary(
      'objects.yaml',
      'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n',
    );

    const run = await runPodmutationInProcess(['report', '--objects', path, ...rulesArgs()]);

    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `podmutation report: ${path}: document 2.kind: expected the kind of the object, got nothing\n`,
    );
  });

  it('exits 2 for an empty objects file', async () => {
    const path = writeTemporary('empty.json', '');

    expect(await runPodmutationInProcess(['report', '--objects', path, ...rulesArgs()])).toMatchObject({
      code: 2,
      stderr: `podmutation report: ${path}: input is empty\n`,
    });
  });

  it('exits 2 when the objects file cannot be read', async () => {
    const run = await runPodmutationInProcess(['report', '--objects', '/nonexistent/cluster.json', ...rulesArgs()]);

    expect(run).toMatchObject({
      code: 2,
      stderr: 'podmutation report: cannot read /nonexistent/cluster.json: no such file or folder (ENOENT)\n',
    });
  });
});

describe('podmutation report --kubeconfig', () => {
  let server: FakeApiServer;
  let kubeconfig: string;

  /** The fixture's PodMutations as the cluster holds them. */
  function clusterRules(): PodMutationInput[] {
    const files = [
      ...readdirSync(fixturePath('report/rules')).map((name) => join(fixturePath('report/rules'), name)),
      fixturePath('report/migrate-legacy-pool.yaml'),
    ];
    return files.map((file) => parseAllDocuments(readFileSync(file, 'utf8'))[0]!.toJS() as PodMutationInput);
  }

  beforeAll(async () => {
    server = await startFakeApiServer({ rolloutsInstalled: true });
    kubeconfig = writeKubeconfig(server);
    for (const resource of clusterRules()) server.put(resource);
    // Its Nodes and NodePools, which the report judges the recreated Pods against, as --capacity does offline.
    server.setNodePoolsInstalled(true);
    server.putObjects(serverObjects(capacityList()));
    server.putObjects(serverObjects(list));
  });

  afterAll(async () => {
    await server.close();
  });

  it("reports the cluster's objects against the cluster's PodMutations as --objects does against the files", async () => {
    expect(await reportJson(['--kubeconfig', kubeconfig, '-A'])).toEqual(
      await reportJson(['--objects', objects, ...rulesArgs(), '--capacity', CAPACITY]),
    );
  });

  it("reads only the kubeconfig context's namespace without -n or -A, as kubectl does", async () => {
    const inBatch = writeKubeconfig(server, { namespace: 'batch' });

    expect(await reportJson(['--kubeconfig', inBatch])).toEqual(
      await reportJson(['--kubeconfig', kubeconfig, '--namespace', 'batch']),
    );
    expect(await reportJson(['--kubeconfig', kubeconfig])).toEqual(
      await reportJson(['--kubeconfig', kubeconfig, '--namespace', 'default']),
    );
  });

  it.each([
    [
      'refuses to list Pods, naming the missing permission',
      {
        kind: 'status',
        code: 403,
        reason: 'Forbidden',
        message: 'pods is forbidden: User "report" cannot list resource "pods"',
      },
      /^podmutation report: listing pods in all namespaces failed: 403 Forbidden/,
    ],
    [
      'resets the connection, as an outage does',
      { kind: 'reset' },
      /^podmutation report: listing pods in all namespaces failed/,
    ],
  ] as const)('exits 2, not the 1 of pending Pods, when the cluster %s', async (_name, fault, message) => {
    server.fail(fault, { resource: 'pods' });
    try {
      const run = await runPodmutationInProcess(['report', '--kubeconfig', kubeconfig, '-A', ...rulesArgs()]);

      expect(run).toMatchObject({ code: 2, stdout: '' });
      expect(run.stderr).toMatch(message);
    } finally {
      server.clearFaults();
    }
  });

  it('reads the cluster without RuntimeClasses when it may not list them, and says so on stderr', async () => {
    server.fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { resource: 'runtimeclasses' });
    try {
      const run = await runPodmutationInProcess(['report', '--kubeconfig', kubeconfig, '-A', '-o', 'json']);

      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout)).toEqual(
        await reportJson(['--objects', objects, ...rulesArgs(), '--capacity', CAPACITY]),
      );
      expect(run.stderr).toMatch(
        /^warning: listing runtimeclasses\.node\.k8s\.io failed: 403 Forbidden: .*list runtimeclasses .*; what RuntimeClasses add to a Pod is read from the running Pods as they arrived at the webhook\n$/,
      );
    } finally {
      server.clearFaults();
    }
  });

  it('takes the rules from --rules when given', async () => {
    const report = await reportJson(['--kubeconfig', kubeconfig, '-A', ...rulesArgs('changed')]);

    expect(report.workloads.find((item) => item.name === 'checkout')?.pending).toBe(2);
  });

  it("lists only the namespace's objects with --namespace", async () => {
    const report = await reportJson(['--kubeconfig', kubeconfig, '--namespace', 'batch']);

    expect(report.totals.pods).toBe(1);
    expect(server.requests.filter((request) => request.path.endsWith('/pods')).at(-1)?.path).toBe(
      '/api/v1/namespaces/batch/pods',
    );
  });

  it('skips a cluster PodMutation the sync would reject, saying so on stderr', async () => {
    server.put({
      metadata: { name: 'broken' },
      spec: {
        enable: true,
        workloadSelector: { namespace: ['production'] },
        mutationAdd: { nodeSelector: { a: 'b' } },
      },
    });
    try {
      const run = await runPodmutationInProcess(['report', '--kubeconfig', kubeconfig, '-A', '-o', 'json']);

      expect(run.code).toBe(1);
      expect(run.stderr).toContain('invalid rule skipped: PodMutation "broken": spec.workloadSelector');
      expect((JSON.parse(run.stdout) as MigrationReport).rules.map((rule) => rule.name)).not.toContain('broken');
    } finally {
      server.remove('broken');
    }
  });
});
