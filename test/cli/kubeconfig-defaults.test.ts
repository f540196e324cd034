import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { kubeconfigFor, startFakeApiServer, type FakeApiServer } from '../cluster/fake-api-server.ts';
import { nodeObject } from '../capacity/support.ts';
import { rulePaths, serverObjects } from '../report/support.ts';
import { runPodmutation } from '../support/cli.ts';

let server: FakeApiServer;
let folder: string;

beforeAll(async () => {
  server = await startFakeApiServer();
  // A Node, so that the report reads a capacity (a cluster listing none is a warning).
  server.putObjects(serverObjects({ apiVersion: 'v1', kind: 'List', metadata: {}, items: [nodeObject('node-1')] }));
  folder = mkdtempSync(join(tmpdir(), 'kubeconfig-defaults-'));
});

afterAll(async () => {
  await server.close();
});

let seen = 0;
beforeEach(() => {
  seen = server.requests.length;
});

/** The paths of the Pod lists the server answered since the test began. */
function podListPaths(): string[] {
  return server.requests
    .slice(seen)
    .map((request) => request.path)
    .filter((path) => path.endsWith('/pods'));
}

function write(name: string, text: string): string {
  const path = join(folder, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/** A kubeconfig that only adds a context named "batch" (namespace batch) and makes it current, as a user's overlay file does. */
const overlay = (): string =>
  stringify({
    apiVersion: 'v1',
    kind: 'Config',
    contexts: [{ name: 'batch', context: { cluster: 'fake-cluster', user: 'fake-user', namespace: 'batch' } }],
    'current-context': 'batch',
  });

const rules = (): string[] => rulePaths().flatMap((path) => ['--rules', path]);

/** The environment of a user without a kubeconfig flag: these variables, nothing from the test runner's own. */
const userEnv = (env: Record<string, string>): Record<string, string> => ({ KUBECONFIG: '', HOME: folder, ...env });

describe('cluster access as kubectl finds it', () => {
  it('merges the files of $KUBECONFIG as kubectl does: the first to set current-context or a name wins, a missing file is skipped', async () => {
    const first = write('overlay.yaml', overlay());
    const second = write('cluster.yaml', kubeconfigFor(server));
    const list = [join(folder, 'missing.yaml'), first, second].join(delimiter);

    const run = await runPodmutation(['report', ...rules(), '-o', 'json'], undefined, userEnv({ KUBECONFIG: list }));

    expect(run.stderr).toBe('');
    expect(podListPaths()).toEqual(['/api/v1/namespaces/batch/pods']);
  });

  it('keeps the first definition of a context name that two files of $KUBECONFIG define', async () => {
    const first = write(
      'same-name.yaml',
      stringify({
        contexts: [{ name: 'fake', context: { cluster: 'fake-cluster', user: 'fake-user', namespace: 'batch' } }],
      }),
    );
    const list = [first, write('cluster.yaml', kubeconfigFor(server))].join(delimiter);

    const run = await runPodmutation(['report', ...rules(), '-o', 'json'], undefined, userEnv({ KUBECONFIG: list }));

    expect(run.stderr).toBe('');
    expect(podListPaths()).toEqual(['/api/v1/namespaces/batch/pods']);
  });

  it('takes --context from the merged files', async () => {
    const list = [write('overlay.yaml', overlay()), write('cluster.yaml', kubeconfigFor(server))].join(delimiter);

    const run = await runPodmutation(
      ['report', '--context', 'fake', ...rules(), '-o', 'json'],
      undefined,
      userEnv({ KUBECONFIG: list }),
    );

    expect(run.stderr).toBe('');
    expect(podListPaths()).toEqual(['/api/v1/namespaces/default/pods']);
  });

  it('reads ~/.kube/config when neither --kubeconfig nor $KUBECONFIG is given', async () => {
    const home = mkdtempSync(join(tmpdir(), 'kubeconfig-home-'));
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), kubeconfigFor(server, { namespace: 'batch' }));

    const run = await runPodmutation(['report', ...rules(), '-o', 'json'], undefined, userEnv({ HOME: home }));

    expect(run.stderr).toBe('');
    expect(podListPaths()).toEqual(['/api/v1/namespaces/batch/pods']);
  });

  it('prefers --kubeconfig to $KUBECONFIG', async () => {
    const flag = write('flag.yaml', kubeconfigFor(server));
    const list = write('overlay-only.yaml', overlay());

    const run = await runPodmutation(
      ['report', '--kubeconfig', flag, ...rules(), '-o', 'json'],
      undefined,
      userEnv({ KUBECONFIG: list }),
    );

    expect(run.stderr).toBe('');
    expect(podListPaths()).toEqual(['/api/v1/namespaces/default/pods']);
  });

  it('runs rollout --dry-run against the cluster of $KUBECONFIG', async () => {
    const list = [write('overlay.yaml', overlay()), write('cluster.yaml', kubeconfigFor(server))].join(delimiter);

    const run = await runPodmutation(['rollout', '--dry-run', ...rules()], undefined, userEnv({ KUBECONFIG: list }));

    expect(run.stderr).toBe('');
    expect(podListPaths()).toEqual(['/api/v1/namespaces/batch/pods']);
  });

  it.each([
    [
      'report',
      ['report', ...rulePaths().flatMap((path) => ['--rules', path])],
      'report needs --objects FILE (a kubectl get -o json List) or the kubeconfig of a cluster',
    ],
    ['rollout', ['rollout', '--dry-run'], 'no kubeconfig'],
    ['sync', ['sync', '--once', '--dynamodb-endpoint', 'http://127.0.0.1:1'], 'no kubeconfig'],
    ['serve', ['serve'], 'serve needs --rules PATH (rule files) or the kubeconfig of a cluster as the rule source'],
  ])('%s exits 2 naming where it looked when no kubeconfig is found', async (_command, args, start) => {
    const run = await runPodmutation(args, undefined, userEnv({}));

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `${start}: --kubeconfig FILE is not given and $KUBECONFIG is not set and ${join(folder, '.kube', 'config')} does not exist`,
    );
  });

  it('names the files of $KUBECONFIG when none of them exists', async () => {
    const list = [join(folder, 'a'), join(folder, 'b')].join(delimiter);

    const run = await runPodmutation(['rollout', '--dry-run'], undefined, userEnv({ KUBECONFIG: list }));

    expect(run).toMatchObject({ code: 2 });
    expect(run.stderr).toContain(`no file of $KUBECONFIG exists (${list})`);
  });
});
