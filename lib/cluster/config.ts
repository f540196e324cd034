import { optionalSetting, type Environment } from '../config/index.ts';
import { ConfigurationError } from '../errors/index.ts';
import { readAll } from '../json/index.ts';
import { AWS_REGION, EKS_CLUSTER_NAME, SECRET_ARN } from '../syntax/index.ts';

/** Where the sync finds the cluster and its credentials. */
type ClusterConfig =
  /** EKS: endpoint and CA from DescribeCluster, token from the function's own IAM identity. */
  | { readonly mode: 'eks'; readonly clusterName: string; readonly region: string }
  /** A kubeconfig stored as the SecretString of a Secrets Manager secret; `region` is the secret's region. */
  | {
      readonly mode: 'kubeconfigSecret';
      readonly secretArn: string;
      readonly region: string;
      readonly context?: string;
    }
  /** A kubeconfig file on disk (workstation use); with `mergedWith`, the first of a $KUBECONFIG list, merged as kubectl does. */
  | {
      readonly mode: 'kubeconfigFile';
      readonly path: string;
      readonly mergedWith?: readonly string[];
      readonly context?: string;
    }
  /** The YAML text of a kubeconfig. */
  | { readonly mode: 'kubeconfigText'; readonly text: string; readonly context?: string };

/** Reads the cluster access mode from the environment: CLUSTER_NAME (+ AWS_REGION) for EKS, or KUBECONFIG_SECRET_ARN; exactly one. */
function readClusterConfig(env: Environment): ClusterConfig {
  const clusterName = optionalSetting(env, 'CLUSTER_NAME');
  const secretArn = optionalSetting(env, 'KUBECONFIG_SECRET_ARN');
  if (clusterName !== undefined && secretArn !== undefined) {
    throw new ConfigurationError(
      'CLUSTER_NAME and KUBECONFIG_SECRET_ARN are both set; set CLUSTER_NAME for EKS access or KUBECONFIG_SECRET_ARN for a kubeconfig, not both',
      { context: { variables: ['CLUSTER_NAME', 'KUBECONFIG_SECRET_ARN'] } },
    );
  }
  if (clusterName !== undefined) return readEksConfig(env, clusterName);
  if (secretArn !== undefined) return readSecretConfig(secretArn);
  throw new ConfigurationError(
    'neither CLUSTER_NAME nor KUBECONFIG_SECRET_ARN is set; set CLUSTER_NAME (with AWS_REGION) for EKS access or KUBECONFIG_SECRET_ARN for a kubeconfig in Secrets Manager',
    { context: { variables: ['CLUSTER_NAME', 'KUBECONFIG_SECRET_ARN'] } },
  );
}

function readEksConfig(env: Environment, name: string): ClusterConfig {
  const { clusterName, region } = readAll(
    { clusterName: () => checkedClusterName(name), region: () => readRegion(env) },
    ConfigurationError,
  );
  return { mode: 'eks', clusterName, region };
}

function checkedClusterName(clusterName: string): string {
  if (!EKS_CLUSTER_NAME.pattern.test(clusterName)) {
    throw new ConfigurationError(
      `CLUSTER_NAME "${clusterName}" is not an EKS cluster name (1-100 letters, digits, "-" or "_", starting with a letter or digit)`,
      { context: { variable: 'CLUSTER_NAME' } },
    );
  }
  return clusterName;
}

function readRegion(env: Environment): string {
  const region = optionalSetting(env, 'AWS_REGION');
  if (region === undefined) {
    throw new ConfigurationError("AWS_REGION is not set; EKS mode (CLUSTER_NAME) needs the cluster's region", {
      context: { variable: 'AWS_REGION' },
    });
  }
  if (!AWS_REGION.pattern.test(region)) {
    throw new ConfigurationError(`AWS_REGION "${region}" is not an AWS region name such as us-east-1`, {
      context: { variable: 'AWS_REGION' },
    });
  }
  return region;
}

function readSecretConfig(secretArn: string): ClusterConfig {
  const match = SECRET_ARN.pattern.exec(secretArn);
  const region = match?.[1];
  if (region === undefined) {
    throw new ConfigurationError(
      `KUBECONFIG_SECRET_ARN "${secretArn}" is not a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)`,
      { context: { variable: 'KUBECONFIG_SECRET_ARN' } },
    );
  }
  return { mode: 'kubeconfigSecret', secretArn, region };
}
export { readClusterConfig };
export type { ClusterConfig };
