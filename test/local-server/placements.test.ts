import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePlacementPolicy } from '../../lib/placement/index.ts';
import { createFileRuleSource, startLocalServer } from '../../lib/local-server/index.ts';
import { admissionReview, pod } from '../support/builders.ts';
import { EXAMPLES, fixtureText } from '../support/fixtures.ts';
import { decodePatch, parseAnswer } from '../support/reviews.ts';
import { type LocalServer } from '../../lib/local-server/server.ts';

const EXAMPLE_PODPLACEMENTS = fileURLToPath(new URL('../../examples/podplacements/', import.meta.url));

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

describe('podmutation serve with PodPlacements in the rule paths', () => {
  let placed: LocalServer;
  const reports: string[] = [];

  beforeAll(async () => {
    placed = await startLocalServer({
      rules: createFileRuleSource([EXAMPLES, EXAMPLE_PODPLACEMENTS]),
      port: 0,
      placements: [parsePlacementPolicy({ namespace: 'batch', kind: 'Job', name: 'reindex', mode: 'NonSpot' })],
      report: (line) => reports.push(line),
    });
  });

  afterAll(() => placed.close());

  async function capacityAsked(namespace: string, owner: { kind: string; name: string }): Promise<unknown> {
    const object = pod({ namespace, name: `${owner.name}-abcde`, owner });
    const response = await fetch(placed.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(admissionReview(object)),
    });
    const { response: answer } = parseAnswer(await response.text());
    if (answer?.patch === undefined) return undefined;
    const affinity = decodePatch(answer.patch).find((operation) => operation.path === '/spec/affinity');
    return JSON.stringify(affinity).match(/"karpenter.sh\/capacity-type","operator":"In","values":\["([^"]+)"\]/)?.[1];
  }

  it('publishes the PodPlacements with the rules and says so', () => {
    expect(reports).toContainEqual(expect.stringMatching(/\(4 valid, 0 invalid; PodPlacements: 2 valid, 0 invalid\)$/));
  });

  it.each([
    ['places a Pod the PodPlacement batch-to-spot selects on Spot', 'batch', { kind: 'Job', name: 'nightly' }, 'spot'],
    [
      'places the Pod of a workload with a placement policy by the policy',
      'batch',
      { kind: 'Job', name: 'reindex' },
      'on-demand',
    ],
    ['leaves a Pod no placement selects alone', 'shop', { kind: 'Job', name: 'nightly' }, undefined],
  ])('%s', async (_, namespace, owner, capacity) => {
    expect(await capacityAsked(namespace, owner)).toBe(capacity);
  });
});
