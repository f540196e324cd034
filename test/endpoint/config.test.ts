import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { readAdmissionConfig } from '../../lib/endpoint/index.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation/webhook-token-AbCdEf';
const TOKEN = 'local-token-0123456789abcdefghijklmnop';

describe('readAdmissionConfig', () => {
  it('reads the store, a secret token source, the default body limit and the default capacity flavour', () => {
    expect(readAdmissionConfig({ RULES_TABLE: 'podmutation-rules', WEBHOOK_TOKEN_SECRET_ARN: SECRET_ARN })).toEqual({
      store: { tableName: 'podmutation-rules', clusterId: 'default', refreshSeconds: 30, maxStaleSeconds: 300 },
      token: { kind: 'secret', secretArn: SECRET_ARN, refreshSeconds: 300 },
      maxBodyBytes: 3 * 1024 * 1024,
      capacityFlavour: 'karpenter',
      enforcement: 'enforce',
    });
  });

  it.each(['karpenter', 'eks', 'gke'] as const)('reads CAPACITY_FLAVOUR %s', (flavour) => {
    expect(
      readAdmissionConfig({ RULES_TABLE: 'rules', WEBHOOK_TOKEN: TOKEN, CAPACITY_FLAVOUR: flavour }).capacityFlavour,
    ).toBe(flavour);
  });

  it('fails naming CAPACITY_FLAVOUR and the accepted flavours when it is unknown', () => {
    const read = () => readAdmissionConfig({ RULES_TABLE: 'rules', WEBHOOK_TOKEN: TOKEN, CAPACITY_FLAVOUR: 'aks' });

    expect(read).toThrow(ConfigurationError);
    expect(read).toThrow('CAPACITY_FLAVOUR is "aks"; expected one of karpenter, eks, gke');
  });

  it('reads a literal token and a body limit for local runs', () => {
    const config = readAdmissionConfig({ RULES_TABLE: 'rules', WEBHOOK_TOKEN: TOKEN, MAX_BODY_BYTES: '65536' });

    expect(config.token).toEqual({ kind: 'literal', token: TOKEN });
    expect(config.maxBodyBytes).toBe(65_536);
  });

  it('fails naming both token variables when neither is set', () => {
    expect(() => readAdmissionConfig({ RULES_TABLE: 'rules' })).toThrow(
      'neither WEBHOOK_TOKEN_SECRET_ARN nor WEBHOOK_TOKEN is set; expected exactly one of them',
    );
  });

  it('fails when both token variables are set', () => {
    expect(() =>
      readAdmissionConfig({ RULES_TABLE: 'rules', WEBHOOK_TOKEN: TOKEN, WEBHOOK_TOKEN_SECRET_ARN: SECRET_ARN }),
    ).toThrow('WEBHOOK_TOKEN_SECRET_ARN and WEBHOOK_TOKEN are both set; expected exactly one of them');
  });

  it('fails naming WEBHOOK_TOKEN_SECRET_ARN when it is not a Secrets Manager ARN', () => {
    expect(() => readAdmissionConfig({ RULES_TABLE: 'rules', WEBHOOK_TOKEN_SECRET_ARN: 'webhook-token' })).toThrow(
      /^WEBHOOK_TOKEN_SECRET_ARN is "webhook-token"; expected a Secrets Manager secret ARN/,
    );
  });

  it('fails naming WEBHOOK_TOKEN without echoing it when it is too short', () => {
    const read = () => readAdmissionConfig({ RULES_TABLE: 'rules', WEBHOOK_TOKEN: 'short-secret' });

    expect(read).toThrow(
      /^WEBHOOK_TOKEN holds a token of 12 characters that is not of the form 32 to 256 characters from A-Z, a-z, 0-9, "-" and "_"/,
    );
    expect(read).not.toThrow(/short-secret/);
  });

  it('fails naming MAX_BODY_BYTES and its range when it is above the Lambda payload limit', () => {
    expect(() =>
      readAdmissionConfig({ RULES_TABLE: 'rules', WEBHOOK_TOKEN: TOKEN, MAX_BODY_BYTES: '10000000' }),
    ).toThrow('MAX_BODY_BYTES is "10000000"; expected a whole number of bytes from 1024 to 6291456');
  });

  it('fails with a ConfigurationError from the store part when RULES_TABLE is missing', () => {
    expect(() => readAdmissionConfig({ WEBHOOK_TOKEN: TOKEN })).toThrow(ConfigurationError);
  });
});
