import { afterEach, describe, expect, it, vi } from 'vitest';
import { readSecretString, secretReaderFor } from '../../lib/secrets/index.ts';
import { startFakeSecretsManager, useSecretsManagerAt } from '../endpoint/support.ts';
import { silentEndpoint } from '../store/support.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:ap-southeast-2:123456789012:secret:podmutation/kubeconfig-AbCdEf';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function fakeWith(secrets: Map<string, string>) {
  const fake = await startFakeSecretsManager(secrets);
  cleanups.push(fake.close);
  return fake;
}

describe('readSecretString', () => {
  it('gives the SecretString of the secret', async () => {
    const fake = await fakeWith(new Map([[SECRET_ARN, 'apiVersion: v1\n']]));

    await expect(readSecretString(fake.client(), SECRET_ARN)).resolves.toEqual({ text: 'apiVersion: v1\n' });
  });

  it('reports a blank SecretString as empty rather than as text', async () => {
    const fake = await fakeWith(new Map([[SECRET_ARN, '  \n']]));

    await expect(readSecretString(fake.client(), SECRET_ARN)).resolves.toEqual({ empty: true });
  });

  it('returns the failed call as a failure instead of throwing', async () => {
    const fake = await fakeWith(new Map());

    const read = await readSecretString(fake.client(), SECRET_ARN);

    expect(read).toHaveProperty('failure');
    expect(String((read as { failure: Error }).failure.message)).toMatch(/ResourceNotFound|not found|secret/i);
  });
});

describe('secretReaderFor', () => {
  it('talks to the region the secret ARN names', async () => {
    const reader = secretReaderFor(SECRET_ARN) as unknown as { config: { region: () => Promise<string> } };

    await expect(reader.config.region()).resolves.toBe('ap-southeast-2');
  });

  it('ends a call the endpoint never answers with a TimeoutError once requestTimeoutMs has passed', async () => {
    const silent = await silentEndpoint();
    cleanups.push(() => silent.close());
    useSecretsManagerAt(silent.endpoint);

    const read = await readSecretString(
      secretReaderFor(SECRET_ARN, { maxAttempts: 1, requestTimeoutMs: 50 }),
      SECRET_ARN,
    );

    expect(read).toMatchObject({ failure: { name: 'TimeoutError' } });
  });
});
