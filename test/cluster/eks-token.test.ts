import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/errors/index.ts';

import { decodeEksToken, expectedSignature } from './eks-token-check.ts';
import { type AwsCredentials, createEksTokenProvider, presignEksToken } from '../../lib/cluster/eks-token.ts';

const credentials: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'FwoGZXIvYXdzEXAMPLE/session+token==',
};
const signingDate = new Date('2026-12-01T12:34:56.789Z');
const request = { clusterName: 'prod-cluster', region: 'eu-west-1', credentials, signingDate };

/** The presigned URL inside a token; fails the test when the prefix or the unpadded base64url encoding is wrong. */
function decodeToken(token: string): URL {
  expect(token.startsWith('k8s-aws-v1.')).toBe(true);
  expect(token.slice('k8s-aws-v1.'.length)).toMatch(/^[A-Za-z0-9_-]+$/);
  const url = decodeEksToken(token);
  expect(url).toBeInstanceOf(URL);
  return url as URL;
}

describe('presignEksToken', () => {
  it('encodes a presigned STS GetCallerIdentity URL for the regional endpoint', async () => {
    const url = decodeToken(await presignEksToken(request));

    expect(url.protocol).toBe('https:');
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    expect(url.searchParams.get('Action')).toBe('GetCallerIdentity');
    expect(url.searchParams.get('Version')).toBe('2011-06-15');
  });

  it('signs the host and x-k8s-aws-id headers with a 60-second presign expiry', async () => {
    const url = decodeToken(await presignEksToken(request));

    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
  });

  it('dates the signature with the clock and scopes the credential to the region and sts', async () => {
    const url = decodeToken(await presignEksToken(request));

    expect(url.searchParams.get('X-Amz-Date')).toBe('20261201T123456Z');
    expect(url.searchParams.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20261201/eu-west-1/sts/aws4_request');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe(credentials.sessionToken);
  });

  it('produces a signature that verifies for the cluster name in x-k8s-aws-id and not for another cluster', async () => {
    const url = decodeToken(await presignEksToken(request));
    const host = 'sts.eu-west-1.amazonaws.com';
    const signature = url.searchParams.get('X-Amz-Signature');

    expect(signature).toBe(
      expectedSignature(url, { host, 'x-k8s-aws-id': 'prod-cluster' }, credentials.secretAccessKey),
    );
    expect(signature).not.toBe(
      expectedSignature(url, { host, 'x-k8s-aws-id': 'other-cluster' }, credentials.secretAccessKey),
    );
  });

  it('gives the same token for the same credentials and clock', async () => {
    expect(await presignEksToken(request)).toBe(
      await presignEksToken({ ...request, signingDate: new Date(signingDate) }),
    );
  });

  it('omits the security token parameter for long-term credentials', async () => {
    const url = decodeToken(
      await presignEksToken({ ...request, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } }),
    );

    expect(url.searchParams.has('X-Amz-Security-Token')).toBe(false);
  });

  it('uses the amazonaws.com.cn STS endpoint in China regions', async () => {
    const url = decodeToken(await presignEksToken({ ...request, region: 'cn-north-1' }));

    expect(url.host).toBe('sts.cn-north-1.amazonaws.com.cn');
  });

  it('stays well under the 4 KB token limit with session credentials', async () => {
    const token = await presignEksToken({
      ...request,
      credentials: { ...credentials, sessionToken: 'x'.repeat(1200) },
    });

    expect(token.length).toBeLessThan(4096);
  });
});

/** A clock tests move by hand. */
function fakeClock(start: Date): { now: () => Date; advance: (ms: number) => void } {
  let current = start.getTime();
  return { now: () => new Date(current), advance: (ms) => (current += ms) };
}

function signedAt(token: string): string | null {
  return decodeToken(token).searchParams.get('X-Amz-Date');
}

describe('createEksTokenProvider', () => {
  it('hands out the cached token until the reuse period ends', async () => {
    const clock = fakeClock(signingDate);
    const provider = createEksTokenProvider({
      clusterName: 'prod-cluster',
      region: 'eu-west-1',
      credentials,
      clock: clock.now,
    });

    const first = await provider.token();
    clock.advance(10 * 60_000 - 1);

    expect(await provider.token()).toBe(first);
  });

  it('presigns a new token dated by the clock once the default 10-minute reuse period has passed', async () => {
    const clock = fakeClock(signingDate);
    const provider = createEksTokenProvider({
      clusterName: 'prod-cluster',
      region: 'eu-west-1',
      credentials,
      clock: clock.now,
    });

    const first = await provider.token();
    clock.advance(10 * 60_000);
    const renewed = await provider.token();

    expect(renewed).not.toBe(first);
    expect(signedAt(renewed)).toBe('20261201T124456Z');
  });

  it('honours a configured reuse period', async () => {
    const clock = fakeClock(signingDate);
    const provider = createEksTokenProvider({
      clusterName: 'prod-cluster',
      region: 'eu-west-1',
      credentials,
      clock: clock.now,
      reuseForMs: 2 * 60_000,
    });

    const first = await provider.token();
    clock.advance(2 * 60_000);

    expect(await provider.token()).not.toBe(first);
  });

  it('renews a minute before the signing credentials expire, even inside the reuse period', async () => {
    const clock = fakeClock(signingDate);
    const expiring = { ...credentials, expiration: new Date(signingDate.getTime() + 5 * 60_000) };
    const provider = createEksTokenProvider({
      clusterName: 'prod-cluster',
      region: 'eu-west-1',
      credentials: () => Promise.resolve(expiring),
      clock: clock.now,
    });

    const first = await provider.token();
    clock.advance(3 * 60_000);
    const beforeMargin = await provider.token();
    clock.advance(60_000);

    expect(beforeMargin).toBe(first);
    expect(await provider.token()).not.toBe(first);
  });

  it('resolves credentials once for concurrent callers', async () => {
    let resolutions = 0;
    const provider = createEksTokenProvider({
      clusterName: 'prod-cluster',
      region: 'eu-west-1',
      credentials: () => {
        resolutions += 1;
        return Promise.resolve(credentials);
      },
      clock: () => signingDate,
    });

    const tokens = await Promise.all([provider.token(), provider.token(), provider.token()]);

    expect(new Set(tokens).size).toBe(1);
    expect(resolutions).toBe(1);
  });

  it('does not keep a failed credential resolution', async () => {
    let calls = 0;
    const provider = createEksTokenProvider({
      clusterName: 'prod-cluster',
      region: 'eu-west-1',
      credentials: () => {
        calls += 1;
        if (calls === 1) return Promise.reject(new Error('credentials not ready'));
        return Promise.resolve(credentials);
      },
      clock: () => signingDate,
    });

    await expect(provider.token()).rejects.toThrow('credentials not ready');
    expect(signedAt(await provider.token())).toBe('20261201T123456Z');
  });

  it('rejects a reuse period that would hand out tokens with less than a minute of validity left', () => {
    expect(() =>
      createEksTokenProvider({
        clusterName: 'prod-cluster',
        region: 'eu-west-1',
        credentials,
        reuseForMs: 14 * 60_000 + 1,
      }),
    ).toThrow(ConfigurationError);
  });
});
