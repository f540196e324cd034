/**
 * The syntax of every value the product reads: Kubernetes names and label syntax (as in apimachinery's validation
 * package), and the AWS and deployment identifiers of its configuration. Each rule lives here once.
 */

/** A value rule: its pattern, and the expected form in words for messages. */
export interface ValueRule {
  readonly pattern: RegExp;
  readonly form: string;
}

/** A Secrets Manager secret ARN; group 1 is its region (a client reads the secret there, no AWS_REGION needed). */
export const SECRET_ARN: ValueRule = {
  pattern: /^arn:aws[a-z-]*:secretsmanager:([a-z]{2}(?:-[a-z]+)+-\d+):\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/,
  form: 'a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)',
};

/** A DynamoDB table name. */
export const TABLE_NAME: ValueRule = {
  pattern: /^[A-Za-z0-9_.-]{3,255}$/,
  form: 'a DynamoDB table name (3 to 255 letters, digits, "_", "-" or ".")',
};

/** The cluster id keying a cluster's items in the table: EKS cluster names, plus dots; embedded verbatim in every key. */
export const CLUSTER_ID: ValueRule = {
  pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
  form: '1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit',
};

/**
 * A cluster's identity: the metadata.uid of its kube-system namespace, which the API server makes a UUID when the
 * namespace is created (staging/src/k8s.io/apiserver/pkg/registry/rest/meta.go, FillObjectMetaSystemFields).
 */
export const CLUSTER_UID: ValueRule = {
  pattern: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  form: 'a Kubernetes uid (a UUID such as 5b7e8a52-0c4f-4b8e-9d43-3f1e6a2c9b70)',
};

/** A Serverless Framework stage or service name, as this project's stacks use them. */
export const SERVERLESS_STAGE: ValueRule = {
  pattern: /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/,
  form: '1 to 64 letters, digits or "-", starting with a letter or digit',
};

/** A CloudFormation stack name (CreateStack: a letter, then letters, digits and "-", at most 128 characters). */
export const CLOUDFORMATION_STACK_NAME: ValueRule = {
  pattern: /^[A-Za-z][A-Za-z0-9-]{0,127}$/,
  form: 'a letter, then up to 127 letters, digits or "-"',
};

/** An EKS cluster name: 1-100 characters, starting with a letter or digit (CreateCluster API reference). */
export const EKS_CLUSTER_NAME: ValueRule = {
  pattern: /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/,
  form: 'an EKS cluster name (1 to 100 letters, digits, "_" or "-", starting with a letter or digit)',
};

/** An AWS region name. */
export const AWS_REGION: ValueRule = { pattern: /^[a-z]{2}(-[a-z]+)+-\d+$/, form: 'an AWS region such as eu-west-1' };

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const INTEGER = /^[+-]?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Why `key` is not a qualified name (label key, annotation key), or undefined when it is. */
export function qualifiedNameProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined) {
    if (prefix.length === 0) return 'prefix before "/" must not be empty';
    if (prefix.length > 253) return `prefix must be at most 253 characters (got ${prefix.length})`;
    if (!DNS1123_SUBDOMAIN.test(prefix)) return `prefix "${prefix}" must be a lowercase DNS-1123 subdomain`;
  }
  if (name.length === 0) return 'name part must not be empty';
  if (name.length > 63) return `name part must be at most 63 characters (got ${name.length})`;
  if (!QUALIFIED_NAME_PART.test(name)) {
    return `name part "${name}" must consist of alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric`;
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is (the empty value is valid). */
export function labelValueProblem(value: string): string | undefined {
  if (value.length === 0) return undefined;
  if (value.length > 63) return `must be at most 63 characters (got ${value.length})`;
  if (!QUALIFIED_NAME_PART.test(value)) {
    return `"${value}" must consist of alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric`;
  }
  return undefined;
}

/** True when `value` is a DNS-1123 label (namespace names). */
export function isDns1123Label(value: string): boolean {
  return value.length <= 63 && DNS1123_LABEL.test(value);
}

/** True when `value` is a DNS-1123 subdomain (names of cluster-scoped resources). */
export function isDns1123Subdomain(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** True when `value` parses as a 64-bit signed integer, as the scheduler parses Gt/Lt operands. */
export function isInt64(value: string): boolean {
  if (!INTEGER.test(value)) return false;
  const parsed = BigInt(value);
  return parsed >= INT64_MIN && parsed <= INT64_MAX;
}

/** True for an absolute http:// or https:// URL (a DynamoDB endpoint). */
export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
