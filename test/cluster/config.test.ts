import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { readClusterConfig } from '../../lib/cluster/index.ts';

const secretArn = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:podmutation/kubeconfig-AbCdEf';

describe('readClusterConfig', () => {
  it('selects EKS mode from CLUSTER_NAME and AWS_REGION', () => {
    expect(readClusterConfig({ CLUSTER_NAME: 'prod-cluster', AWS_REGION: 'us-east-1' })).toEqual({
      mode: 'eks',
      clusterName: 'prod-cluster',
      region: 'us-east-1',
    });
  });

  it('selects kubeconfig mode from KUBECONFIG_SECRET_ARN and takes the region from the ARN', () => {
    expect(readClusterConfig({ KUBECONFIG_SECRET_ARN: secretArn, AWS_REGION: 'us-east-1' })).toEqual({
      mode: 'kubeconfigSecret',
      secretArn,
      region: 'eu-central-1',
    });
  });

  it('rejects setting both CLUSTER_NAME and KUBECONFIG_SECRET_ARN, naming both', () => {
    expect(() =>
      readClusterConfig({ CLUSTER_NAME: 'prod-cluster', AWS_REGION: 'us-east-1', KUBECONFIG_SECRET_ARN: secretArn }),
    ).toThrow(/CLUSTER_NAME and KUBECONFIG_SECRET_ARN are both set/);
  });

  it('rejects setting neither, naming both variables', () => {
    expect(() => readClusterConfig({ AWS_REGION: 'us-east-1' })).toThrow(
      /neither CLUSTER_NAME nor KUBECONFIG_SECRET_ARN is set/,
    );
  });

  it('throws ConfigurationError for configuration problems', () => {
    expect(() => readClusterConfig({})).toThrow(ConfigurationError);
  });

  it('requires AWS_REGION in EKS mode', () => {
    expect(() => readClusterConfig({ CLUSTER_NAME: 'prod-cluster' })).toThrow(/AWS_REGION is not set/);
  });

  it('rejects an AWS_REGION that is not a region name', () => {
    expect(() => readClusterConfig({ CLUSTER_NAME: 'prod-cluster', AWS_REGION: 'Frankfurt' })).toThrow(
      /AWS_REGION "Frankfurt" is not an AWS region name/,
    );
  });

  it('rejects a CLUSTER_NAME that EKS would not accept', () => {
    expect(() => readClusterConfig({ CLUSTER_NAME: '-prod cluster', AWS_REGION: 'us-east-1' })).toThrow(
      /CLUSTER_NAME "-prod cluster" is not an EKS cluster name/,
    );
  });

  it('rejects a KUBECONFIG_SECRET_ARN that is not a Secrets Manager ARN', () => {
    expect(() => readClusterConfig({ KUBECONFIG_SECRET_ARN: 'podmutation/kubeconfig' })).toThrow(
      /KUBECONFIG_SECRET_ARN "podmutation\/kubeconfig" is not a Secrets Manager secret ARN/,
    );
  });

  it('treats an empty variable as unset', () => {
    expect(readClusterConfig({ CLUSTER_NAME: '', KUBECONFIG_SECRET_ARN: secretArn }).mode).toBe('kubeconfigSecret');
  });

  it('accepts secret ARNs of other partitions', () => {
    const govArn = 'arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:kubeconfig-x1y2z3';

    expect(readClusterConfig({ KUBECONFIG_SECRET_ARN: govArn })).toMatchObject({ region: 'us-gov-west-1' });
  });
});
