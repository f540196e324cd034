import { Document } from 'yaml';
import { PRODUCT_ANNOTATION_PREFIX } from '../api/index.ts';
import { ConfigurationError } from '../errors/index.ts';
import { previewInput } from '../json/index.ts';
import { WEBHOOK_TOKEN_FORM, WEBHOOK_TOKEN_PATTERN } from '../syntax/index.ts';
import type { FailurePolicy, MutatingWebhookConfiguration, WebhookConfigurationOptions } from './types.ts';

/** Defaults applied by `renderWebhookConfiguration` to options left out. */
export const WEBHOOK_DEFAULTS = Object.freeze({
  failurePolicy: 'Ignore',
  timeoutSeconds: 5,
  name: 'podmutation.agent.cloudpilot.ai',
});

const FAILURE_POLICIES: readonly FailurePolicy[] = ['Ignore', 'Fail'];
// The API server accepts 1..30 seconds (admissionregistration validation).
const TIMEOUT_RANGE = { minimum: 1, maximum: 30 } as const;
// 32 characters of even the smallest usual alphabet (hex) carry 128 bits.
const TOKEN_PATTERN = WEBHOOK_TOKEN_PATTERN;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// The API Gateway route is POST /admit/{token}.
const ADMISSION_ROUTE = '/admit/';

/** Why `url` cannot be the webhook's base URL, or undefined when it can. Never echoes user info or a query. */
function baseUrlProblem(url: string): string | undefined {
  if (url.length === 0) return 'is empty; expected https://host[/path]';
  if (/[\s\p{Cc}]/u.test(url)) return 'must not contain whitespace or control characters';
  if (url.includes('?'))
    return 'must not contain a query ("?..."); the API server forbids query parameters in webhook URLs';
  if (url.includes('#'))
    return 'must not contain a fragment ("#..."); the API server forbids fragments in webhook URLs';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL; expected https://host[/path]';
  }
  if (parsed.protocol !== 'https:')
    return `must use https (got ${parsed.protocol.replace(/:$/, '')}); the API server only calls https webhooks`;
  // new URL() drops an empty user info ("https://@host"), which the API server still rejects.
  const authority = url.slice(url.indexOf('//') + 2).split('/')[0] ?? '';
  if (authority.includes('@') || parsed.username !== '' || parsed.password !== '') {
    return 'must not contain user information ("user:password@"); the API server forbids it in webhook URLs';
  }
  if (parsed.hostname === '') return 'must name a host; expected https://host[/path]';
  if (/\/admit(\/[^/]*)?\/*$/.test(parsed.pathname)) {
    return `must be the base URL of the HTTP API, without ${ADMISSION_ROUTE}{token}; the token is appended from the token option`;
  }
  return undefined;
}

function checkedFailurePolicy(value: unknown): FailurePolicy {
  if (value === undefined) return WEBHOOK_DEFAULTS.failurePolicy;
  if (typeof value === 'string' && (FAILURE_POLICIES as readonly string[]).includes(value))
    return value as FailurePolicy;
  throw new ConfigurationError(`webhook failurePolicy must be Ignore or Fail (got ${previewInput(value)})`, {
    context: { option: 'failurePolicy' },
  });
}

function checkedTimeout(value: unknown): number {
  if (value === undefined) return WEBHOOK_DEFAULTS.timeoutSeconds;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < TIMEOUT_RANGE.minimum ||
    value > TIMEOUT_RANGE.maximum
  ) {
    throw new ConfigurationError(
      `webhook timeoutSeconds must be a whole number of seconds from ${TIMEOUT_RANGE.minimum} to ${TIMEOUT_RANGE.maximum} (got ${previewInput(value)})`,
      { context: { option: 'timeoutSeconds' } },
    );
  }
  return value;
}

function checkedName(value: unknown): string {
  if (value === undefined) return WEBHOOK_DEFAULTS.name;
  // Webhook names must be fully qualified: a DNS subdomain of at least three labels.
  if (
    typeof value !== 'string' ||
    value.length > 253 ||
    !DNS1123_SUBDOMAIN.test(value) ||
    value.split('.').length < 3
  ) {
    throw new ConfigurationError(
      `webhook name must be a lowercase DNS subdomain of at least three dot-separated labels, such as ${WEBHOOK_DEFAULTS.name} (got ${previewInput(value)})`,
      { context: { option: 'name' } },
    );
  }
  return value;
}

function checkedUrl(value: unknown): string {
  const problem = typeof value === 'string' ? baseUrlProblem(value) : 'must be a string';
  if (problem !== undefined)
    throw new ConfigurationError(`webhook base URL ${problem}`, { context: { option: 'url' } });
  return (value as string).replace(/\/+$/, '');
}

// RFC 7468 PEM: one or more CERTIFICATE blocks, base64 lines between the labels, nothing else but whitespace.
const PEM_CERTIFICATES = /^\s*(-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\s*)+$/;

/** The CA bundle as the API server takes it (base64 of the PEM), or undefined when none is given. */
function checkedCaBundle(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && /PRIVATE KEY-----/.test(value)) {
    // Said apart: a key in the bundle would be written into a cluster object every client of the API can read.
    throw new ConfigurationError('webhook CA bundle holds a private key; give the CA certificate (PEM) only', {
      context: { option: 'caBundle' },
    });
  }
  if (typeof value !== 'string' || !PEM_CERTIFICATES.test(value)) {
    throw new ConfigurationError(
      'webhook CA bundle must be PEM certificates ("-----BEGIN CERTIFICATE-----" blocks) and nothing else',
      {
        context: { option: 'caBundle' },
      },
    );
  }
  return Buffer.from(value.trim() + '\n').toString('base64');
}

function checkedToken(value: unknown): string {
  // The message never includes the token itself, only its length.
  if (typeof value !== 'string' || !TOKEN_PATTERN.test(value)) {
    const got =
      typeof value === 'string'
        ? `${value.length} characters${/^[A-Za-z0-9_-]*$/.test(value) ? '' : ', some outside that alphabet'}`
        : typeof value;
    throw new ConfigurationError(
      `webhook token must be ${WEBHOOK_TOKEN_FORM} (URL-path-safe; 32 hex characters carry 128 bits, ` +
        `the minimum; generate it randomly, e.g. openssl rand -hex 32) (got ${got})`,
      { context: { option: 'token' } },
    );
  }
  return value;
}

/**
 * Renders the MutatingWebhookConfiguration that points the cluster at the admission endpoint
 * (base URL + /admit/ + token). Pure; throws ConfigurationError naming the option that is wrong.
 * @internal Exported for tests: the tests check the object before it is printed as YAML.
 */
export function renderWebhookConfiguration(options: WebhookConfigurationOptions): MutatingWebhookConfiguration {
  const base = checkedUrl(options.url);
  const token = checkedToken(options.token);
  const failurePolicy = checkedFailurePolicy(options.failurePolicy);
  const timeoutSeconds = checkedTimeout(options.timeoutSeconds);
  const name = checkedName(options.name);
  const caBundle = checkedCaBundle(options.caBundle);
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name, labels: { 'app.kubernetes.io/name': 'podmutation' } },
    webhooks: [
      {
        name,
        admissionReviewVersions: ['v1'],
        clientConfig: { url: `${base}${ADMISSION_ROUTE}${token}`, ...(caBundle === undefined ? {} : { caBundle }) },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
        failurePolicy,
        matchPolicy: 'Equivalent',
        // The webhook counts each Diversity Pod it numbers (lib/endpoint/diversity-sequence.ts), and never a dry run's:
        // with NoneOnDryRun the API server still calls it for dry runs, and sends dryRun: true so it can tell.
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds,
        // Rules match the Pod as the webhook first sees it; a second call would match a mutated Pod.
        reinvocationPolicy: 'Never',
        namespaceSelector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] },
            { key: `${PRODUCT_ANNOTATION_PREFIX}ignore`, operator: 'NotIn', values: ['true'] },
          ],
        },
        matchConditions: [
          {
            // DaemonSet Pods are never mutated, so the API server need not call the webhook for them.
            name: 'skip-daemonset-pods',
            expression:
              "!has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(ref, has(ref.controller) && ref.controller && ref.kind == 'DaemonSet')",
          },
          {
            // Nor are Pods bound to a Node when they are created, mirror Pods among them (the API server refuses the
            // mirror annotation without spec.nodeName); the engine skips them too, for a configuration without this.
            name: 'skip-bound-pods',
            expression: "!has(object.spec.nodeName) || object.spec.nodeName == ''",
          },
        ],
      },
    ],
  };
}

/** The same configuration as YAML, ready for `kubectl apply -f -`; the header warns that it holds the token. */
export function webhookConfigurationYaml(options: WebhookConfigurationOptions): string {
  const document = new Document(renderWebhookConfiguration(options));
  document.commentBefore =
    ' MutatingWebhookConfiguration for the PodMutation webhook (podmutation webhook-config).\n' +
    ' The URL carries the webhook token: treat this file as a secret and keep it out of version control.';
  return document.toString({ lineWidth: 0 });
}
