/** `podmutation rollout` through the CLI against the fake API server: its flags, its dry run and its exit codes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutRecord } from '../../lib/rollout/index.ts';
import { startFakeApiServer, writeKubeconfig, type FakeApiServer } from '../cluster/fake-api-server.ts';
import { clusterList, rulePaths, serverObjects } from '../report/support.ts';
import { runPodmutationInProcess } from '../support/cli.ts';

const rulesArgs = () => rulePaths('changed').flatMap((path) => ['--rules', path]);

describe('podmutation rollout', () => {
  let server: FakeApiServer;
  let kubeconfig: string;

  beforeAll(async () => {
    server = await startFakeApiServer();
    kubeconfig = writeKubeconfig(server);
    const list = await clusterList();
    server.putObjects(serverObjects(list));
  });
  afterAll(async () => server.close());

  it.each([
    [
      'no kubeconfig anywhere',
      ['--dry-run'],
      'no kubeconfig: --kubeconfig FILE is not given and $KUBECONFIG and $HOME are not set',
    ],
    [
      'a --timeout that is no duration',
      ['--kubeconfig', 'k', '--timeout', '5 minutes'],
      '--timeout "5 minutes" is not a duration (such as 30s, 5m or 1h30m)',
    ],
    ['a --pause that is no duration', ['--kubeconfig', 'k', '--pause', '-1s'], '--pause "-1s" is not a duration'],
    [
      'a --max-concurrent of 0',
      ['--kubeconfig', 'k', '--max-concurrent', '0'],
      '--max-concurrent "0" is not a positive integer',
    ],
    [
      'a --namespace that is no namespace name',
      ['--kubeconfig', 'k', '-n', 'Prod'],
      '--namespace "Prod" is not a namespace name',
    ],
    ['-o yaml', ['--kubeconfig', 'k', '-o', 'yaml'], "argument 'yaml' is invalid"],
  ])('exits 2 for %s', async (_, args, message) => {
    const run = await runPodmutationInProcess(['rollout', ...args]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe('');
  });

  it('prints the plan with --dry-run, writes nothing, and exits 1 while Pods are pending', async () => {
    const before = server.requests.length;

    const run = await runPodmutationInProcess([
      'rollout',
      '--kubeconfig',
      kubeconfig,
      '-A',
      ...rulesArgs(),
      '--dry-run',
      '--max-concurrent',
      '2',
      '-o',
      'json',
    ]);

    expect(run.code, run.stderr).toBe(1);
    const records = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as RolloutRecord);
    const planned = records.filter((record) => record.type === 'workload' && record.state === 'planned');
    expect(planned.length).toBeGreaterThan(0);
    expect(planned.map((record) => (record.type === 'workload' ? record.wave : 0))).toEqual(
      planned.map((_, index) => Math.floor(index / 2) + 1),
    );
    expect(records.every((record) => record.type === 'workload' && record.reason !== '')).toBe(true);
    expect(server.requests.slice(before).every((request) => request.method === 'GET')).toBe(true);
  });

  it('prints one plain line per workload for people', async () => {
    const run = await runPodmutationInProcess([
      'rollout',
      '--kubeconfig',
      kubeconfig,
      '-A',
      ...rulesArgs(),
      '--dry-run',
    ]);

    expect(run.stdout).toMatch(/^wave 1 \S+ \S+\/\S+: planned \(.+\)$/m);
  });

  it('exits 2, not 1, when the cluster cannot be read: a wait loop reads 1 as "not yet"', async () => {
    const closed = await startFakeApiServer();
    const unreachable = writeKubeconfig(closed);
    await closed.close();

    const run = await runPodmutationInProcess(['rollout', '--kubeconfig', unreachable, ...rulesArgs()]);

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^podmutation rollout: /);
    expect(run.stdout).toBe('');
  });
});
