import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePlacementPolicy } from '../../lib/placement/index.ts';
import { createFileRuleSource, startLocalServer, type LocalServer } from '../../lib/local-server/index.ts';
import { EXAMPLES, fixtureText } from '../support/fixtures.ts';

let server: LocalServer;

beforeAll(async () => {
  server = await startLocalServer({
    rules: createFileRuleSource([EXAMPLES]),
    port: 0,
    placements: [parsePlacementPolicy({ namespace: 'production', kind: 'Deployment', name: 'checkout', mode: 'Spot' })],
    capacityFlavour: 'gke',
  });
});

afterAll(() => server.close());

describe('podmutation serve --placements', () => {
  it('applies the managed capacity step after the rules, with the configured flavour', async () => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: fixtureText('reviews/deployment-legacy-pool.json'),
    });
    const { response: answer } = (await response.json()) as { response: { patch: string } };
    const patch = JSON.parse(Buffer.from(answer.patch, 'base64').toString('utf8')) as {
      path: string;
      value: unknown;
    }[];
    expect(patch).toContainEqual({
      op: 'add',
      path: '/metadata/annotations/podmutation.agent.cloudpilot.ai~1applied',
      value: 'migrate-legacy-pool,managed:capacity',
    });
    const affinity = patch.find((operation) => operation.path === '/spec/affinity/nodeAffinity')?.value;
    expect(JSON.stringify(affinity)).toContain(
      '{"key":"cloud.google.com/gke-provisioning","operator":"In","values":["spot"]}',
    );
  });
});
