import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { readSyncConfig } from '../../lib/sync/index.ts';

const EKS_ENV = { RULES_TABLE: 'podmutation-rules', CLUSTER_NAME: 'prod-eu', AWS_REGION: 'eu-west-1' };

describe('reading the sync configuration', () => {
  it('defaults the interval to 30 seconds and reads the store and cluster settings', () => {
    expect(readSyncConfig(EKS_ENV)).toEqual({
      intervalSeconds: 30,
      store: { tableName: 'podmutation-rules', clusterId: 'default', refreshSeconds: 30, maxStaleSeconds: 300 },
      cluster: { mode: 'eks', clusterName: 'prod-eu', region: 'eu-west-1' },
      reportIntervalMinutes: 0,
      capacityFlavour: 'karpenter',
    });
  });

  it.each(['0', '1', '15', '1440'])('accepts REPORT_INTERVAL_MINUTES=%s', (value) => {
    expect(readSyncConfig({ ...EKS_ENV, REPORT_INTERVAL_MINUTES: value }).reportIntervalMinutes).toBe(Number(value));
  });

  it.each(['1441', '-1', '5m', '1.5'])(
    'rejects REPORT_INTERVAL_MINUTES=%s naming the variable and the range',
    (value) => {
      expect(() => readSyncConfig({ ...EKS_ENV, REPORT_INTERVAL_MINUTES: value })).toThrow(
        `REPORT_INTERVAL_MINUTES is "${value}"; expected a whole number of minutes from 0 to 1440`,
      );
    },
  );

  it('treats an empty SYNC_INTERVAL_SECONDS as unset', () => {
    expect(readSyncConfig({ ...EKS_ENV, SYNC_INTERVAL_SECONDS: '' }).intervalSeconds).toBe(30);
  });

  it.each(['5', '15', '60'])('accepts SYNC_INTERVAL_SECONDS=%s', (value) => {
    expect(readSyncConfig({ ...EKS_ENV, SYNC_INTERVAL_SECONDS: value }).intervalSeconds).toBe(Number(value));
  });

  it.each(['4', '61', '0', '-5', '30s', '2.5', 'thirty'])(
    'rejects SYNC_INTERVAL_SECONDS=%s naming the variable and the range',
    (value) => {
      const read = () => readSyncConfig({ ...EKS_ENV, SYNC_INTERVAL_SECONDS: value });

      expect(read).toThrow(ConfigurationError);
      expect(read).toThrow(`SYNC_INTERVAL_SECONDS is "${value}"; expected a whole number of seconds from 5 to 60`);
    },
  );

  it('reads a kubeconfig secret as the cluster', () => {
    const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation-kubeconfig-AbCdEf';

    expect(readSyncConfig({ RULES_TABLE: 'podmutation-rules', KUBECONFIG_SECRET_ARN: secretArn }).cluster).toEqual({
      mode: 'kubeconfigSecret',
      secretArn,
      region: 'eu-west-1',
    });
  });

  it('fails naming RULES_TABLE when the table is not set', () => {
    expect(() => readSyncConfig({ CLUSTER_NAME: 'prod-eu', AWS_REGION: 'eu-west-1' })).toThrow(
      /^RULES_TABLE is not set/,
    );
  });

  it('fails naming both cluster variables when neither is set', () => {
    expect(() => readSyncConfig({ RULES_TABLE: 'podmutation-rules' })).toThrow(
      /neither CLUSTER_NAME nor KUBECONFIG_SECRET_ARN is set/,
    );
  });

  it('fails naming AWS_REGION when EKS mode has no region', () => {
    expect(() => readSyncConfig({ RULES_TABLE: 'podmutation-rules', CLUSTER_NAME: 'prod-eu' })).toThrow(
      /^AWS_REGION is not set/,
    );
  });
});
