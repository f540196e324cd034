import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { useControlPlane } from './use-control-plane.ts';
import { registerWebhook, serveWebhook, type ServedWebhook } from './webhook.ts';

const cluster = useControlPlane();
let webhook: ServedWebhook;

beforeAll(async () => {
  webhook = await serveWebhook(cluster(), { rules: ['examples/rules'] });
  await registerWebhook(cluster(), webhook);
  await cluster().kubectl(['create', 'namespace', 'production']);
});
afterAll(async () => webhook?.stop());

describe('smoke', () => {
  it('mutates checkout', async () => {
    const plane = cluster();
    const r = await plane.kubectl(['apply', '-f', 'examples/tests/migrate-legacy-pool/resources/checkout.yaml']);
    console.log(r.stdout, r.stderr);
    const w = await plane.kubectl(['-n', 'production', 'rollout', 'status', 'deployment/checkout', '--timeout=60s']);
    expect(w.code, w.stderr + w.stdout).toBe(0);
    console.log((await plane.kubectl(['get', 'pods', '-n', 'production', '-o', 'wide'])).stdout);
    console.log((await plane.kubectl(['get', 'pods', '-n', 'production', '-o', 'jsonpath={.items[0].spec.affinity}{.items[0].metadata.annotations}'])).stdout);
  });
});
