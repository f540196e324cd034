import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  startFakeApiServer,
  writeKubeconfig,
  type FakeApiServer,
  type PodMutationInput,
  type WorkloadObjectInput,
} from '../cluster/fake-api-server.ts';
import { fixtureText } from '../support/fixtures.ts';
import { nodeObject } from '../capacity/support.ts';

const BIN = fileURLToPath(new URL('../../bin/podmutation.mjs', import.meta.url));
const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const SYNC_INTERVAL_SECONDS = 0.5;
const REFRESH_SECONDS = 0.5;
// "within one sync interval plus one refresh", plus room for a loaded CI machine.
const REFLECTED_WITHIN_MS = (SYNC_INTERVAL_SECONDS + REFRESH_SECONDS) * 1000 + 4000;
const migrateLegacyPool = parse(fixtureText('../../examples/rules/migrate-legacy-pool.yaml')) as PodMutationInput;

let cluster: FakeApiServer;
let serve: ChildProcessWithoutNullStreams;
let url: string;

/** The webhook's answer to the review: the rules it applied (the annotation its patch sets) and its warnings. */
interface Answer {
  readonly applied: string | undefined;
  readonly warnings: readonly string[];
}

async function answer(): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: REVIEW });
  expect(response.status).toBe(200);
  const { response: answered } = (await response.json()) as { response: { patch?: string; warnings?: string[] } };
  const warnings = answered.warnings ?? [];
  if (answered.patch === undefined) return { applied: undefined, warnings };
  const patch = JSON.parse(Buffer.from(answered.patch, 'base64').toString('utf8')) as {
    path: string;
    value: unknown;
  }[];
  const applied = patch.find(
    (operation) => operation.path === '/metadata/annotations/podmutation.agent.cloudpilot.ai~1applied',
  )?.value as string;
  return { applied, warnings };
}

async function appliedRules(): Promise<string | undefined> {
  return (await answer()).applied;
}

/** Polls the webhook until `expected` holds of its answer, and says how long that took. */
async function answered(expected: (answer: Answer) => boolean): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < REFLECTED_WITHIN_MS) {
    if (expected(await answer())) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the webhook did not reflect the change within ${REFLECTED_WITHIN_MS} ms`);
}

/** Polls the webhook until `expected` holds of the rules it applied. */
async function reflected(expected: (applied: string | undefined) => boolean): Promise<number> {
  return answered(({ applied }) => expected(applied));
}

beforeAll(async () => {
  cluster = await startFakeApiServer();
  cluster.put(migrateLegacyPool);
  serve = spawn(process.execPath, [
    BIN,
    'serve',
    '--kubeconfig',
    writeKubeconfig(cluster),
    '--port',
    '0',
    '--sync-interval',
    String(SYNC_INTERVAL_SECONDS),
    '--refresh',
    String(REFRESH_SECONDS),
  ]);
  url = await new Promise<string>((resolve, reject) => {
    let output = '';
    serve.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /webhook URL \(clientConfig\.url of a MutatingWebhookConfiguration\): (\S+)/.exec(output);
      if (match !== null) resolve(match[1]!);
    });
    serve.on('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
});

afterAll(async () => {
  serve.kill('SIGTERM');
  await cluster.close();
});

describe('podmutation serve --kubeconfig', () => {
  it('applies the rules the cluster holds', async () => {
    expect(await appliedRules()).toBe('migrate-legacy-pool');
  });

  it('writes the Accepted status back to the cluster, as the sync Lambda does', () => {
    const patch = cluster.statusPatches.find((item) => item.name === 'migrate-legacy-pool');
    expect(patch?.body).toMatchObject({
      status: { conditions: [{ type: 'Accepted', status: 'True', reason: 'Valid' }, { type: 'Schedulable' }] },
    });
  });

  it('says Schedulable is Unknown for a cluster that lists no Node and no NodePool, rather than that nothing fits', () => {
    const patch = cluster.statusPatches.find((item) => item.name === 'migrate-legacy-pool');
    expect(patch?.body).toMatchObject({
      status: {
        conditions: [{ type: 'Accepted' }, { type: 'Schedulable', status: 'Unknown', reason: 'CapacityUnknown' }],
      },
    });
  });

  it('reflects a rule added in the cluster within one sync interval plus one refresh', async () => {
    cluster.put({
      metadata: { name: 'tag-checkout' },
      spec: {
        enable: true,
        priority: 200,
        workloadSelector: { namespaces: ['production'] },
        mutationAdd: { annotations: { 'example.com/team': 'payments' } },
      },
    });
    await reflected((applied) => applied === 'migrate-legacy-pool,tag-checkout');
  });

  it('reflects a changed rule', async () => {
    cluster.put({
      metadata: { name: 'tag-checkout' },
      spec: {
        enable: true,
        priority: 1,
        workloadSelector: { namespaces: ['production'] },
        mutationAdd: { annotations: { 'example.com/team': 'payments' } },
      },
    });
    await reflected((applied) => applied === 'tag-checkout,migrate-legacy-pool');
  });

  it('reflects a disabled rule', async () => {
    cluster.put({
      metadata: { name: 'tag-checkout' },
      spec: {
        enable: false,
        workloadSelector: { namespaces: ['production'] },
        mutationAdd: { annotations: { 'example.com/team': 'payments' } },
      },
    });
    await reflected((applied) => applied === 'migrate-legacy-pool');
  });

  it('reflects a deleted rule', async () => {
    cluster.remove('migrate-legacy-pool');
    await reflected((applied) => applied === undefined);
  });

  it('keeps serving the last rules while the cluster answers errors', async () => {
    cluster.put(migrateLegacyPool);
    await reflected((applied) => applied === 'migrate-legacy-pool');
    cluster.fail({ kind: 'status', code: 500 });
    await new Promise((resolve) => setTimeout(resolve, (SYNC_INTERVAL_SECONDS + REFRESH_SECONDS) * 2000));
    expect(await appliedRules()).toBe('migrate-legacy-pool');
    cluster.clearFaults();
  });

  it("judges each changed Pod against the cluster's own Nodes: a warning while the target pool has none, none once one joins", async () => {
    const stranded = (warnings: readonly string[]) => warnings.some((warning) => warning.includes('now fits nowhere'));
    const pool = (name: string) => ({ 'example.com/node-pool': name, 'kubernetes.io/arch': 'amd64' });
    cluster.putObjects([nodeObject('legacy-1', pool('legacy')) as WorkloadObjectInput]);
    await answered(({ applied, warnings }) => applied === 'migrate-legacy-pool' && stranded(warnings));

    cluster.putObjects([nodeObject('merged-1', pool('merged')) as WorkloadObjectInput]);

    await answered(({ applied, warnings }) => applied === 'migrate-legacy-pool' && !stranded(warnings));
  });
});
