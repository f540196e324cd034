/**
 * What each environment variable of the functions means, for docs/configuration.md only (`npm run docs:env`); the
 * readers beside each function's configuration read them, and test/config/variables.test.ts fails when a reader reads
 * one this list does not declare, or this list declares one no reader or Powertools reads.
 */

/** Which function reads a variable. */
type ReadBy = 'admission' | 'sync' | 'both';

/** One variable as docs/configuration.md lists it. */
interface VariableDoc {
  readonly name: string;
  readonly readBy: ReadBy;
  readonly meaning: string;
  /** Read by Powertools for AWS Lambda itself, not by a reader here. */
  readonly powertools?: true;
}

const POWERTOOLS = "Powertools' own setting";

/**
 * Every variable, in the order the docs list them.
 * @internal Exported for tests: the tests check every variable's reader against its documentation.
 */
const VARIABLES: readonly VariableDoc[] = [
  { name: 'RULES_TABLE', readBy: 'both', meaning: 'the DynamoDB table (required)' },
  {
    name: 'CLUSTER_ID',
    readBy: 'both',
    meaning: "key prefix of this cluster's items (default `default`; one table can serve several clusters)",
  },
  {
    name: 'DYNAMODB_ENDPOINT',
    readBy: 'both',
    meaning: "a DynamoDB endpoint to use instead of AWS's (DynamoDB Local, dynalite); tests honour it too",
  },
  {
    name: 'RULES_REFRESH_SECONDS',
    readBy: 'admission',
    meaning: "cache refresh interval, whole seconds (default 30, the reference's cache period)",
  },
  {
    name: 'RULES_MAX_STALE_SECONDS',
    readBy: 'admission',
    meaning:
      'how long the last snapshot is served while refreshes fail, before answering 500 (default 300, at least the refresh interval)',
  },
  {
    name: 'WEBHOOK_TOKEN_SECRET_ARN',
    readBy: 'admission',
    meaning:
      'Secrets Manager secret holding the path token (the whole SecretString or `{"token": "…"}`); its AWSCURRENT and AWSPREVIOUS versions are accepted',
  },
  {
    name: 'TOKEN_REFRESH_SECONDS',
    readBy: 'admission',
    meaning:
      'how often the token secret and the stamp key secret are re-read (default 300, 10..3600): the longest a removed token or stamp key stays accepted',
  },
  {
    name: 'WEBHOOK_TOKEN',
    readBy: 'admission',
    meaning: 'the token itself, for local runs; exactly one of the two token variables',
  },
  {
    name: 'STAMP_KEY_SECRET_ARN',
    readBy: 'admission',
    meaning:
      'Secrets Manager secret whose SecretString is the stamp key ([*Re-applying rules*](api.md#re-applying-rules)): its AWSCURRENT version signs, its AWSCURRENT, AWSPREVIOUS and AWSPENDING versions verify, re-read every `TOKEN_REFRESH_SECONDS` ([*Rotating the stamp key*](operations.md#rotating-the-stamp-key))',
  },
  {
    name: 'STAMP_KEY',
    readBy: 'admission',
    meaning:
      'the key itself (32 to 256 base64url characters), for local runs; at most one of the two, and with neither no Pod is stamped',
  },
  {
    name: 'MAX_BODY_BYTES',
    readBy: 'admission',
    meaning: 'largest accepted request body, decoded (default 3145728, 3 MiB); a larger one is answered 413',
  },
  {
    name: 'CAPACITY_FLAVOUR',
    readBy: 'both',
    meaning:
      'capacity label of managed placement: `karpenter` (default, `karpenter.sh/capacity-type`), `eks` (`eks.amazonaws.com/capacityType`) or `gke` (`cloud.google.com/gke-provisioning`)',
  },
  {
    name: 'ENFORCEMENT',
    readBy: 'admission',
    meaning:
      '`enforce` (default) or `audit`: audit evaluates and logs every rule without changing Pods (the stack parameter `enforcement`)',
  },
  {
    name: 'CLUSTER_NAME',
    readBy: 'sync',
    meaning:
      "EKS mode: the cluster to read PodMutations from (endpoint and CA from DescribeCluster, token from the role's credentials)",
  },
  {
    name: 'KUBECONFIG_SECRET_ARN',
    readBy: 'sync',
    meaning:
      'kubeconfig mode instead: a secret holding a kubeconfig (e.g. a service-account token); exactly one of the two',
  },
  { name: 'AWS_REGION', readBy: 'sync', meaning: 'region of the EKS cluster (set by Lambda)' },
  {
    name: 'SYNC_INTERVAL_SECONDS',
    readBy: 'sync',
    meaning: 'seconds between syncs within one invocation (default 30, 5..60)',
  },
  {
    name: 'REPORT_INTERVAL_MINUTES',
    readBy: 'sync',
    meaning:
      "minutes between migration reports on each rule's status (`matchedPods`, `pendingPods`, the `Schedulable` condition); 0, the default, is off (0..1440; the stack parameter `reportIntervalMinutes`); needs `infra/rbac-sync-report.yaml`",
  },
  // A literal list, with no call, so that a bundle importing lib/config without it drops it.
  { name: 'POWERTOOLS_SERVICE_NAME', readBy: 'both', meaning: POWERTOOLS, powertools: true },
  { name: 'POWERTOOLS_METRICS_NAMESPACE', readBy: 'both', meaning: POWERTOOLS, powertools: true },
  { name: 'POWERTOOLS_LOG_LEVEL', readBy: 'both', meaning: POWERTOOLS, powertools: true },
];

/** The Markdown table of every variable. */
function renderVariableTable(): string {
  const rows = VARIABLES.map(({ name, readBy, meaning }) => `| \`${name}\` | ${readBy} | ${meaning} |`);
  return ['| variable | function | meaning |', '| --- | --- | --- |', ...rows, ''].join('\n');
}

export { VARIABLES, renderVariableTable };
