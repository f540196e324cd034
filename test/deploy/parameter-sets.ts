/**
 * The parameter sets the template is packaged with: by the deployment test (test/deploy/serverless.test.ts) and by
 * `npm run check:template` (scripts/check-template.ts), which runs cfn-lint and checkov on each.
 */

export const CLUSTER_NAME = 'ci-cluster';
export const KUBECONFIG_SECRET_ARN =
  'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation/kubeconfig-AbCdEf';
export const ALARM_TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:podmutation-alarms';
export const SUBNET_IDS = ['subnet-0a1b2c3d4e5f60718', 'subnet-0a1b2c3d4e5f60719'];
export const SECURITY_GROUP_IDS = ['sg-0a1b2c3d4e5f6071a'];

/** EKS mode with every default. */
export const EKS_PARAMS = { clusterName: CLUSTER_NAME };
/** A cluster with a private endpoint, whose access entries are managed outside the stack. */
export const VPC_PARAMS = {
  clusterName: CLUSTER_NAME,
  subnetIds: SUBNET_IDS.join(','),
  securityGroupIds: ` ${SECURITY_GROUP_IDS.join(', ')}`,
  createAccessEntry: 'false',
};
/** Kubeconfig mode, with an alarm topic and a shorter log retention. */
export const KUBECONFIG_PARAMS = {
  clusterName: CLUSTER_NAME,
  kubeconfigSecretArn: KUBECONFIG_SECRET_ARN,
  logRetentionInDays: '7',
  alarmTopicArn: ALARM_TOPIC_ARN,
};
/** Every tuning parameter away from its default: audit, the migration report, provisioned concurrency, throttles. */
export const TUNED_PARAMS = {
  clusterName: CLUSTER_NAME,
  enforcement: 'audit',
  reportIntervalMinutes: '15',
  provisionedConcurrency: '5',
  concurrencyQuota: '3000',
  throttleRateLimit: '250',
  throttleBurstLimit: '500',
  alarmTopicArn: ALARM_TOPIC_ARN,
};

/** Every parameter set a packaged template is asserted under, by name. */
export const TEMPLATE_PARAMETER_SETS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  eks: EKS_PARAMS,
  kubeconfig: KUBECONFIG_PARAMS,
  vpc: VPC_PARAMS,
  tuned: TUNED_PARAMS,
};
