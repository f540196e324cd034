/**
 * The label facts Karpenter decides compatibility with, at the release the real-cluster oracle pins
 * (test/real-cluster/karpenter/go.mod): its well-known labels, which a NodePool may leave undefined, its restricted label
 * domains, the aliases it normalises, and the labels every NodeClaim template carries.
 */

/** karpenter.sh/nodepool: the label of a NodePool's Nodes, and a requirement of its NodeClaim template. */
const NODE_POOL_LABEL = 'karpenter.sh/nodepool';

/** The label a Node may carry its own name in, and no other Node shares. */
const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/** The taint kube-scheduler's NodeUnschedulable filter asks a cordoned Node's Pods to tolerate (NoSchedule). */
const UNSCHEDULABLE_TAINT_KEY = 'node.kubernetes.io/unschedulable';

// sigs.k8s.io/karpenter pkg/apis/v1/labels.go, WellKnownLabels.
const KARPENTER_WELL_KNOWN = [
  NODE_POOL_LABEL,
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'karpenter.sh/capacity-type',
  'node.kubernetes.io/windows-build',
];

// github.com/aws/karpenter-provider-aws pkg/apis/v1/labels.go, the labels its init() adds to WellKnownLabels.
const AWS_WELL_KNOWN = [
  'karpenter.k8s.aws/capacity-reservation-id',
  'karpenter.k8s.aws/capacity-reservation-type',
  'karpenter.k8s.aws/capacity-reservation-interruptible',
  'karpenter.k8s.aws/instance-hypervisor',
  'karpenter.k8s.aws/instance-encryption-in-transit-supported',
  'karpenter.k8s.aws/instance-category',
  'karpenter.k8s.aws/instance-capability-flex',
  'karpenter.k8s.aws/instance-family',
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-size',
  'karpenter.k8s.aws/instance-local-nvme',
  'karpenter.k8s.aws/instance-cpu',
  'karpenter.k8s.aws/instance-cpu-manufacturer',
  'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz',
  'karpenter.k8s.aws/instance-memory',
  'karpenter.k8s.aws/instance-ebs-bandwidth',
  'karpenter.k8s.aws/instance-network-bandwidth',
  'karpenter.k8s.aws/instance-gpu-name',
  'karpenter.k8s.aws/instance-gpu-manufacturer',
  'karpenter.k8s.aws/instance-gpu-count',
  'karpenter.k8s.aws/instance-gpu-memory',
  'karpenter.k8s.aws/instance-accelerator-name',
  'karpenter.k8s.aws/instance-accelerator-manufacturer',
  'karpenter.k8s.aws/instance-accelerator-count',
  'topology.k8s.aws/zone-id',
  'karpenter.k8s.aws/instance-tenancy',
  'karpenter.k8s.aws/placement-group-id',
  'karpenter.k8s.aws/placement-group-partition',
];

/** The labels a NodePool may leave undefined and still be compatible with a Pod that constrains them. */
const WELL_KNOWN_LABELS: ReadonlySet<string> = new Set([...KARPENTER_WELL_KNOWN, ...AWS_WELL_KNOWN]);

/**
 * Label domains only Karpenter sets (karpenter.sh, and the AWS provider's karpenter.k8s.aws): a Pod constraining a
 * label of theirs that is not well known is refused (pkg/apis/v1/labels.go, IsRestrictedLabel).
 */
const RESTRICTED_LABEL_DOMAINS: readonly string[] = ['karpenter.sh', 'karpenter.k8s.aws'];

/** Labels a Pod may not constrain for Karpenter (RestrictedLabels): a new Node's hostname is not known in advance. */
const RESTRICTED_LABELS: ReadonlySet<string> = new Set([HOSTNAME_LABEL]);

/** The values Karpenter knows for a well-known label; an In of none of them is refused (WellKnownValuesForRequirements). */
const WELL_KNOWN_VALUES: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['karpenter.sh/capacity-type', new Set(['on-demand', 'spot', 'reserved'])],
  ['karpenter.k8s.aws/instance-tenancy', new Set(['dedicated', 'default'])],
]);

/** Deprecated aliases Karpenter reads as the label they became (NormalizedLabels), in Pods and NodePools alike. */
const NORMALIZED_LABELS: ReadonlyMap<string, string> = new Map([
  ['failure-domain.beta.kubernetes.io/zone', 'topology.kubernetes.io/zone'],
  ['beta.kubernetes.io/arch', 'kubernetes.io/arch'],
  ['beta.kubernetes.io/os', 'kubernetes.io/os'],
  ['beta.kubernetes.io/instance-type', 'node.kubernetes.io/instance-type'],
  ['failure-domain.beta.kubernetes.io/region', 'topology.kubernetes.io/region'],
]);

/**
 * The requirements every NodeClaim template carries besides its NodePool's, so that DaemonSet Pods asking for them are
 * compatible (pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go, NewNodeClaimTemplate).
 */
const TEMPLATE_LABELS: Readonly<Record<string, string>> = {
  'karpenter.sh/registered': 'true',
  'karpenter.sh/initialized': 'true',
};

/** The label naming a NodePool's node class: "<group>/<kind in lower case>" (pkg/apis/v1/labels.go, NodeClassLabelKey). */
function nodeClassLabel(group: string, kind: string): string {
  return `${group}/${kind.toLowerCase()}`;
}

/** True when Karpenter refuses a Pod that constrains `key` (IsRestrictedLabel): a restricted domain or label. */
function isRestrictedLabel(key: string): boolean {
  if (WELL_KNOWN_LABELS.has(key)) return false;
  const slash = key.indexOf('/');
  const domain = slash === -1 ? '' : key.slice(0, slash);
  if (RESTRICTED_LABEL_DOMAINS.some((restricted) => domain === restricted || domain.endsWith(`.${restricted}`)))
    return true;
  return RESTRICTED_LABELS.has(key);
}

/**
 * Why Karpenter's NodePool CRD refuses `key` as a requirement's key or a template label (the AWS provider's
 * karpenter.sh_nodepools.yaml, whose rules add the karpenter.k8s.aws domain to the core CRD's), or undefined.
 */
function nodePoolLabelProblem(key: string): string | undefined {
  // CEL's find("^([^/]+)"): the text before the first "/", or the whole key.
  const domain = key.split('/')[0]!;
  if (key === NODE_POOL_LABEL || key === HOSTNAME_LABEL) return `the label ${key} is restricted`;
  if (domain.endsWith('karpenter.sh') && key !== 'karpenter.sh/capacity-type')
    return 'the label domain "karpenter.sh" is restricted';
  if (domain.endsWith('karpenter.k8s.aws') && !WELL_KNOWN_LABELS.has(key) && key !== 'karpenter.k8s.aws/ec2nodeclass')
    return 'the label domain "karpenter.k8s.aws" is restricted';
  return undefined;
}

export {
  nodePoolLabelProblem,
  HOSTNAME_LABEL,
  NODE_POOL_LABEL,
  UNSCHEDULABLE_TAINT_KEY,
  WELL_KNOWN_LABELS,
  WELL_KNOWN_VALUES,
  NORMALIZED_LABELS,
  TEMPLATE_LABELS,
  nodeClassLabel,
  isRestrictedLabel,
};
