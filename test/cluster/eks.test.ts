import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterError } from '../../lib/errors/index.ts';
import { createPodMutationSource } from '../../lib/cluster/index.ts';
import { decodeEksToken, isValidEksToken } from './eks-token-check.ts';
import { startFakeApiServer, type FakeApiServer } from './fake-api-server.ts';
import { startFakeAws, type FakeAws } from './fake-aws.ts';
import { type AwsCredentials } from '../../lib/cluster/eks-token.ts';

const credentials: AwsCredentials = {
  accessKeyId: 'AKIDSYNCROLE',
  secretAccessKey: 'sync-role-secret',
  sessionToken: 'sync-session',
};
const region = 'eu-west-1';

let server: FakeApiServer;
let aws: FakeAws;

beforeAll(async () => {
  // The fake API server authenticates like the EKS authenticator: only tokens signed for prod-cluster.
  server = await startFakeApiServer({
    acceptToken: (token) =>
      isValidEksToken(token, { clusterName: 'prod-cluster', region, secretAccessKey: credentials.secretAccessKey }),
  });
  server.put({ metadata: { name: 'spot-first' }, spec: { priority: 1 } });
  aws = await startFakeAws();
  aws.clusters.set('prod-cluster', { endpoint: server.url, caData: Buffer.from(server.caPem).toString('base64') });
});

afterAll(async () => {
  await server.close();
  await aws.close();
});

function fakeClock(start: string): { now: () => Date; advance: (ms: number) => void } {
  let current = Date.parse(start);
  return { now: () => new Date(current), advance: (ms) => (current += ms) };
}

function eksSource(clusterName: string, clock = fakeClock('2026-12-01T12:00:00Z')) {
  return createPodMutationSource(
    { mode: 'eks', clusterName, region },
    { eksClient: aws.eksClient(), credentials: () => Promise.resolve(credentials), clock: clock.now },
  );
}

function lastTokenDate(): string | null | undefined {
  return decodeEksToken(server.tokens.at(-1) ?? '')?.searchParams.get('X-Amz-Date');
}

describe('EKS mode', () => {
  it('lists with the endpoint and CA from DescribeCluster and a token signed for the cluster', async () => {
    const list = await eksSource('prod-cluster').listPodMutations();

    expect(list.items).toHaveLength(1);
  });

  it('describes the cluster once for the life of the source', async () => {
    const source = eksSource('prod-cluster');
    const before = aws.calls.describeCluster;

    await source.listPodMutations();
    await source.listPodMutations();

    expect(aws.calls.describeCluster - before).toBe(1);
  });

  it('reuses the token within ten minutes and sends a freshly dated one afterwards', async () => {
    const clock = fakeClock('2026-12-01T12:00:00Z');
    const source = eksSource('prod-cluster', clock);

    await source.listPodMutations();
    const firstToken = server.tokens.at(-1);
    clock.advance(9 * 60_000);
    await source.listPodMutations();
    const reusedToken = server.tokens.at(-1);
    clock.advance(2 * 60_000);
    await source.listPodMutations();

    expect(reusedToken).toBe(firstToken);
    expect(lastTokenDate()).toBe('20261201T121100Z');
  });

  it('rejects with ClusterError reason notFound naming a cluster EKS does not know', async () => {
    const failure = eksSource('no-such-cluster').listPodMutations();

    await expect(failure).rejects.toBeInstanceOf(ClusterError);
    await expect(failure).rejects.toThrow(/describing EKS cluster no-such-cluster failed: ResourceNotFoundException/);
    await expect(failure).rejects.toMatchObject({ context: { reason: 'notFound', clusterName: 'no-such-cluster' } });
  });

  it('rejects with reason configuration while the cluster has no endpoint yet', async () => {
    aws.clusters.set('creating-cluster', { status: 'CREATING' });

    await expect(eksSource('creating-cluster').listPodMutations()).rejects.toMatchObject({
      name: 'ClusterError',
      context: { reason: 'configuration' },
      message: expect.stringMatching(/no https endpoint or certificate authority yet \(status CREATING\)/) as unknown,
    });
  });

  it('rejects with reason unauthorized when the API server does not accept the token', async () => {
    // The API server only trusts tokens for prod-cluster; this cluster's endpoint points at it too.
    aws.clusters.set('other-cluster', { endpoint: server.url, caData: Buffer.from(server.caPem).toString('base64') });

    await expect(eksSource('other-cluster').listPodMutations()).rejects.toMatchObject({
      name: 'ClusterError',
      context: { reason: 'unauthorized' },
    });
  });
});
