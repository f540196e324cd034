/**
 * StatefulSets whose Pods only a deletion rolls out (OnDelete, or a partition), with the real StatefulSet controller:
 * a Pod deleted is recreated at the revision newVersionedStatefulSetPod chooses (kubernetes/kubernetes
 * pkg/controller/statefulset/stateful_set_utils.go), so `report` evaluates each Pod against that revision's template
 * (read from its ControllerRevision), and a StatefulSet whose deleted Pod would come back at another revision than it
 * runs (a staged template) is held: `report` says why, `--restart-commands` prints the reason as a comment, `rollout`
 * leaves it alone. The deletions the script prints are evictions, preconditioned on the uid the report saw.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationReport, ReportWorkload } from '../../lib/report/index.ts';

import { runPodmutation } from '../support/cli.ts';
import type { Json } from './api.ts';
import { capacityFile, kubectlObjects, kubectlOk, runScript } from './kubectl.ts';
import { readyPod, settled } from './pods.ts';
import { reportJson, reportRun, rolloutJson } from './podmutation.ts';
import { legacyTemplate, mergeLegacyPool } from './pools.ts';
import { useControlPlane } from './use-control-plane.ts';
import { ruleFolder, serveAndRegister, type ServedWebhook } from './webhook.ts';
import { type WorkloadRecord } from '../../lib/rollout/types.ts';

const cluster = useControlPlane();

const STAGED = 'sts-staged';
const SCRIPT = 'sts-script';
// A toleration of a taint no Node has: it changes no placement, only what the report compares.
const DEDICATED = { key: 'example.com/dedicated', operator: 'Exists', effect: 'NoSchedule' };

const RULES = [mergeLegacyPool([STAGED, SCRIPT], ['StatefulSet'])];

function statefulSet(namespace: string, name: string, replicas: number, updateStrategy: Json, image: string): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace },
    spec: {
      replicas,
      serviceName: name,
      updateStrategy,
      selector: { matchLabels: { app: name } },
      template: legacyTemplate(name, { containers: [{ name: 'app', image }] }),
    },
  };
}

/** `podmutation report -n NAMESPACE` under the rules, as JSON. */
function report(rules: string, namespace: string) {
  return reportJson(cluster(), ['--rules', rules, '-n', namespace]);
}

function row(result: MigrationReport | undefined, name: string): ReportWorkload | undefined {
  return result?.workloads.find((workload) => workload.name === name);
}

describe('StatefulSets whose Pods only a deletion rolls out, on a real control plane', () => {
  let webhook: ServedWebhook;
  let rules: string;
  let revisions: { pg: { current: string; update: string }; db: { current: string; update: string } };
  let uids: Record<string, string>;

  beforeAll(async () => {
    const plane = cluster();
    rules = await ruleFolder(plane, RULES);
    for (const namespace of [STAGED, SCRIPT]) await plane.ensureNamespace(namespace);
    // Before the webhook: every Pod starts on the legacy pool.
    await kubectlObjects(plane, 'create', [
      statefulSet(STAGED, 'pg', 2, { type: 'OnDelete' }, 'postgres:15'),
      statefulSet(STAGED, 'db', 3, { type: 'RollingUpdate', rollingUpdate: { partition: 2 } }, 'app:1'),
      statefulSet(SCRIPT, 'cache', 2, { type: 'RollingUpdate', rollingUpdate: { partition: 1 } }, 'cache:1'),
    ]);
    for (const [namespace, name, replicas] of [
      [STAGED, 'pg', 2],
      [STAGED, 'db', 3],
      [SCRIPT, 'cache', 2],
    ] as const)
      await settled(plane, 'StatefulSet', namespace, name, (status) => status.readyReplicas === replicas);
    webhook = await serveAndRegister(plane, { rules: [rules] });

    // pg: postgres:16 staged over Pods that run postgres:15; OnDelete recreates no Pod itself.
    await kubectlOk(plane, [
      'patch',
      'statefulset',
      'pg',
      '-n',
      STAGED,
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"postgres:16"}]',
    ]);
    const pg = await settled(
      plane,
      'StatefulSet',
      STAGED,
      'pg',
      (status) => status.updateRevision !== status.currentRevision,
    );
    // db-0, below the partition, recreated by hand through the webhook: admitted under the current rule.
    const before = await readyPod(plane, STAGED, 'db-0');
    await kubectlOk(plane, ['delete', 'pod', 'db-0', '-n', STAGED, '--wait=false']);
    await readyPod(plane, STAGED, 'db-0', before.metadata.uid);
    // Then a template staged for the ordinals at or above the partition: the controller recreates db-2 with it.
    await kubectlOk(plane, [
      'patch',
      'statefulset',
      'db',
      '-n',
      STAGED,
      '--type',
      'json',
      '-p',
      JSON.stringify([
        { op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'app:2' },
        { op: 'add', path: '/spec/template/spec/tolerations', value: [DEDICATED] },
      ]),
    ]);
    const db = await settled(
      plane,
      'StatefulSet',
      STAGED,
      'db',
      (status) =>
        status.updateRevision !== status.currentRevision && status.updatedReplicas === 1 && status.readyReplicas === 3,
    );
    revisions = {
      pg: { current: pg.currentRevision!, update: pg.updateRevision! },
      db: { current: db.currentRevision!, update: db.updateRevision! },
    };
    uids = {};
    for (const name of ['pg-0', 'pg-1', 'db-0', 'db-1', 'db-2'])
      uids[name] = (await readyPod(plane, STAGED, name)).metadata.uid;
    expect((await readyPod(plane, STAGED, 'db-2')).metadata.labels?.['controller-revision-hash']).toBe(
      revisions.db.update,
    );
  });
  afterAll(async () => webhook?.stop());

  it('holds an OnDelete StatefulSet whose template is staged, and says why, with no Pod to delete', async () => {
    const { run, result } = await report(rules, STAGED);

    expect(run.code, run.stderr).toBe(1);
    const pg = row(result, 'pg');
    expect(pg).toMatchObject({ kind: 'StatefulSet', pods: 2, pending: 2 });
    expect(pg?.deletePods).toBeUndefined();
    expect(pg?.held).toBe(
      `its template is staged: update revision ${revisions.pg.update} over current revision ${revisions.pg.current}; deleting a Pod would ship the staged template; finish or roll back the StatefulSet's update first`,
    );
  });

  it('evaluates each Pod of a partitioned StatefulSet against the revision it would come back at: below the partition, the current one', async () => {
    const { result } = await report(rules, STAGED);

    const db = row(result, 'db');
    // db-0 (recreated under the rule) and db-2 (the controller's, at the update revision) are current; db-1 pending.
    expect(db).toMatchObject({ pods: 3, current: 2, pending: 1 });
    expect(db?.held).toBeUndefined();
    expect(db?.deletePods).toEqual([{ name: 'db-1', uid: uids['db-1'] }]);
    expect(db?.change).not.toContain('example.com/dedicated');
  });

  it('holds the partitioned StatefulSet read from a file without its ControllerRevisions, and reads it as the cluster with them', async () => {
    const plane = cluster();
    const read = async (kinds: string) => {
      const file = join(plane.dir, `${kinds.replace(/,/g, '-')}.json`);
      await writeFile(file, await kubectlOk(plane, ['get', kinds, '-n', STAGED, '-o', 'json']));
      const capacity = await capacityFile(plane, 'sts-capacity.yaml');
      const run = await runPodmutation([
        'report',
        '--objects',
        file,
        '--capacity',
        capacity,
        '--rules',
        rules,
        '-o',
        'json',
      ]);
      return JSON.parse(run.stdout) as MigrationReport;
    };

    const without = await read('pods,statefulsets');
    const withRevisions = await read('pods,statefulsets,controllerrevisions');

    expect(row(without, 'db')?.deletePods).toBeUndefined();
    expect(row(without, 'db')?.held).toBe(
      `the template of its current revision ${revisions.db.current}, at which Pod db-1 would be recreated, was not read (list controllerrevisions with the StatefulSets)`,
    );
    expect(withRevisions).toEqual((await report(rules, STAGED)).result);
  });

  it('prints the held StatefulSet as a comment, never as a command', async () => {
    const run = await reportRun(cluster(), ['--rules', rules, '-n', STAGED, '--restart-commands']);

    const lines = run.stdout.trim().split('\n');
    expect(lines).toContain(
      `# held: StatefulSet ${STAGED}/pg (2 pending Pods): its template is staged: update revision ${revisions.pg.update} over current revision ${revisions.pg.current}; deleting a Pod would ship the staged template; finish or roll back the StatefulSet's update first`,
    );
    expect(lines.filter((line) => !line.startsWith('#') && /\bpg\b|pg-\d/.test(line))).toEqual([]);
    expect(lines.filter((line) => line.includes('/pods/db-')).map((line) => /pods\/(db-\d)\//.exec(line)?.[1])).toEqual(
      ['db-1'],
    );
  });

  it('rollout leaves the held StatefulSet alone with the reason, and deletes only the pending Pod of the partitioned one, which comes back current', async () => {
    const plane = cluster();
    const { result: result0 } = await report(rules, STAGED);

    const { run, records: steps } = await rolloutJson(plane, ['--rules', rules, '-n', STAGED, '--timeout', '60s']);

    expect(steps.find((step) => step.type === 'workload' && step.name === 'pg')).toMatchObject({
      wave: 0,
      state: 'held',
      reason: row(result0, 'pg')?.held,
    });
    expect(
      steps
        .filter((step) => step.type === 'workload' && step.name === 'db')
        .map((step) => (step as WorkloadRecord).state),
    ).toEqual(['planned', 'started', 'done']);
    for (const name of ['pg-0', 'pg-1', 'db-0', 'db-2'])
      expect((await readyPod(plane, STAGED, name)).metadata.uid, name).toBe(uids[name]);
    for (const name of ['pg-0', 'pg-1'])
      expect((await readyPod(plane, STAGED, name)).spec.containers[0]?.image).toBe('postgres:15');
    const db1 = await readyPod(plane, STAGED, 'db-1', uids['db-1']);
    expect(db1.metadata.labels?.['controller-revision-hash']).toBe(revisions.db.current);
    expect(db1.spec.nodeName).toMatch(/^merged-/);
    // pg's two Pods stay pending: the run exits 1, and a second run changes nothing of db.
    expect(run.code, run.stderr).toBe(1);
    const { result } = await report(rules, STAGED);
    expect(row(result, 'db')).toMatchObject({ current: 3, pending: 0 });
  });

  it('runs the printed evictions with the built kubectl: refused, and the script stopped, while a PodDisruptionBudget allows none', async () => {
    const plane = cluster();
    await kubectlObjects(plane, 'create', [
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'cache', namespace: SCRIPT },
        spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'cache' } } },
      },
    ]);
    // Counted: the budget's two healthy Pods, observed.
    await settled(plane, 'PodDisruptionBudget', SCRIPT, 'cache', (status) => status.currentHealthy === 2);
    const before = { 'cache-0': (await readyPod(plane, SCRIPT, 'cache-0')).metadata.uid, 'cache-1': '' };
    before['cache-1'] = (await readyPod(plane, SCRIPT, 'cache-1')).metadata.uid;
    const run = await reportRun(plane, ['--rules', rules, '-n', SCRIPT, '--restart-commands']);
    const bash = () => runScript(plane, 'cache.sh', run.stdout);

    const refused = await bash();

    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('disruption budget');
    expect((await readyPod(plane, SCRIPT, 'cache-1')).metadata.uid).toBe(before['cache-1']);
    expect((await readyPod(plane, SCRIPT, 'cache-0')).metadata.uid).toBe(before['cache-0']);

    await kubectlOk(plane, ['delete', 'pdb', 'cache', '-n', SCRIPT]);
    const ran = await bash();

    expect(ran.code, ran.stderr).toBe(0);
    for (const name of ['cache-0', 'cache-1'])
      expect((await readyPod(plane, SCRIPT, name)).spec.nodeName, name).toMatch(/^merged-/);
    const after = await report(rules, SCRIPT);
    expect(after.run.code, after.run.stderr).toBe(0);
  });
});
