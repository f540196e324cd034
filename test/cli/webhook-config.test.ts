import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from 'selfsigned';
import { parse } from 'yaml';

import { startFakeAws, type FakeAws } from '../cluster/fake-aws.ts';
import { runPodmutation } from '../support/cli.ts';
import { type MutatingWebhookConfiguration } from '../../lib/webhook/types.ts';

const TOKEN = 'Jx3vQ9nT2rK7mW4pL8sD1fG6hB5cV0zXaYbEeUuIi_o';
const BASE = 'https://abc123.execute-api.eu-west-1.amazonaws.com';

/** The MutatingWebhookConfiguration the command printed as YAML. */
function printedConfiguration(stdout: string): MutatingWebhookConfiguration {
  return parse(stdout) as MutatingWebhookConfiguration;
}

describe('podmutation webhook-config', () => {
  it('prints a MutatingWebhookConfiguration pointing at BASE/admit/TOKEN with the safe defaults', async () => {
    const run = await runPodmutation(['webhook-config', '--url', BASE, '--token', TOKEN]);
    expect(run.code).toBe(0);
    const [webhook] = printedConfiguration(run.stdout).webhooks;
    expect(webhook).toMatchObject({
      clientConfig: { url: `${BASE}/admit/${TOKEN}` },
      admissionReviewVersions: ['v1'],
      sideEffects: 'NoneOnDryRun',
      failurePolicy: 'Ignore',
      timeoutSeconds: 5,
      reinvocationPolicy: 'Never',
    });
  });

  it('takes --failure-policy Fail and --timeout', async () => {
    const run = await runPodmutation([
      'webhook-config',
      '--url',
      BASE,
      '--token',
      TOKEN,
      '--failure-policy',
      'Fail',
      '--timeout',
      '10',
    ]);
    expect(printedConfiguration(run.stdout).webhooks[0]).toMatchObject({ failurePolicy: 'Fail', timeoutSeconds: 10 });
  });

  it.each([
    [['--url', 'http://insecure.example.com', '--token', TOKEN], /https/],
    [['--url', `${BASE}?x=1`, '--token', TOKEN], /query/],
    [['--url', BASE, '--token', TOKEN, '--timeout', '31'], /timeout/i],
    [
      ['--url', BASE, '--token', TOKEN, '--timeout', 'abc'],
      /option '--timeout <seconds>' argument 'abc' is invalid\. Expected a whole number of seconds\./,
    ],
    [
      ['--url', BASE, '--token', TOKEN, '--timeout', '2.5'],
      /option '--timeout <seconds>' argument '2\.5' is invalid\. Expected a whole number of seconds\./,
    ],
    [['--url', BASE], /exactly one of --token T or --token-secret ARN/],
    [
      ['--url', BASE, '--token', TOKEN, '--failure-policy', 'Maybe'],
      /option '--failure-policy <policy>' argument 'Maybe' is invalid\. Allowed choices are Ignore, Fail\./,
    ],
    [
      ['--url', BASE, '--token', TOKEN, '--token-secret', 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:x'],
      /option '--token <token>' cannot be used with option '--token-secret <arn>'/,
    ],
    [['--token', TOKEN], /required option '--url <base>' not specified/],
  ])('refuses %j with exit 2', async (args, message) => {
    const run = await runPodmutation(['webhook-config', ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toContain(TOKEN);
  });

  describe('with --ca-bundle', () => {
    let folder: string;
    let caPem: string;
    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'podmutation-ca-bundle-'));
      caPem = (await generate([{ name: 'commonName', value: 'private-ca' }], { keyType: 'ec', algorithm: 'sha256' }))
        .cert;
      await writeFile(join(folder, 'ca.pem'), caPem);
      // The right shape with a body that is not DER: a truncated copy-paste.
      await writeFile(
        join(folder, 'damaged.pem'),
        '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIJAO3p\n-----END CERTIFICATE-----\n',
      );
    });
    afterAll(() => rm(folder, { recursive: true, force: true }));

    it('puts the CA certificate into clientConfig.caBundle', async () => {
      const run = await runPodmutation([
        'webhook-config',
        '--url',
        BASE,
        '--token',
        TOKEN,
        '--ca-bundle',
        join(folder, 'ca.pem'),
      ]);
      expect(run.code).toBe(0);
      const bundle = printedConfiguration(run.stdout).webhooks[0]!.clientConfig.caBundle!;
      expect(Buffer.from(bundle, 'base64').toString('utf8').trim()).toBe(caPem.trim());
    });

    it.each([
      [
        'a file that does not exist',
        'missing.pem',
        /--ca-bundle .*missing\.pem cannot be read: no such file or folder \(ENOENT\)/,
      ],
      ['a certificate that does not parse', 'damaged.pem', /--ca-bundle .*damaged\.pem: certificate 1 does not parse/],
    ])('exits 2 on %s and prints nothing', async (_case, file, message) => {
      const run = await runPodmutation([
        'webhook-config',
        '--url',
        BASE,
        '--token',
        TOKEN,
        '--ca-bundle',
        join(folder, file),
      ]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(message);
    });
  });

  describe('with --token-secret', () => {
    let aws: FakeAws;
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation-webhook-token-AbCdEf';
    beforeAll(async () => {
      aws = await startFakeAws();
      aws.secrets.set(arn, TOKEN);
    });
    afterAll(() => aws.close());

    it('reads the token from Secrets Manager', async () => {
      const bin = fileURLToPath(new URL('../../bin/podmutation.mjs', import.meta.url));
      const env = {
        ...process.env,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.url,
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'secret',
        AWS_EC2_METADATA_DISABLED: 'true',
      };
      const stdout = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, [bin, 'webhook-config', '--url', BASE, '--token-secret', arn], { env });
        let out = '';
        child.stdout.on('data', (chunk) => (out += chunk));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
      });
      expect(printedConfiguration(stdout).webhooks[0]?.clientConfig.url).toBe(`${BASE}/admit/${TOKEN}`);
      expect(aws.calls.getSecretValue).toBe(1);
    });

    it('exits 2 naming the secret when it cannot be read, and prints nothing', async () => {
      const missing = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation-missing-AbCdEf';
      const env = {
        AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.url,
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: 'secret',
        AWS_EC2_METADATA_DISABLED: 'true',
      };

      const run = await runPodmutation(['webhook-config', '--url', BASE, '--token-secret', missing], undefined, env);

      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        `podmutation webhook-config: reading the webhook token from secret ${missing} (AWSCURRENT) failed`,
      );
    });
  });
});
