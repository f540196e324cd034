import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { webhookConfigurationYaml } from '../../lib/webhook/index.ts';
import { evaluateCel, toCelInput } from './cel.ts';
import { type WebhookConfigurationOptions } from '../../lib/webhook/types.ts';
import { renderWebhookConfiguration } from '../../lib/webhook/configuration.ts';

const BASE = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
const TOKEN = 'Zq3xV9pL2mN8rT4wY6bC1dF5gH7jK0sA';
const options: WebhookConfigurationOptions = { url: BASE, token: TOKEN };

function webhookOf(overrides: Partial<WebhookConfigurationOptions> = {}) {
  return renderWebhookConfiguration({ ...options, ...overrides }).webhooks[0]!;
}

describe('renderWebhookConfiguration', () => {
  it('renders one mutating webhook for Pod CREATE with the documented defaults', () => {
    const configuration = renderWebhookConfiguration(options);
    expect(configuration).toMatchObject({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'podmutation.agent.cloudpilot.ai' },
    });
    expect(configuration.webhooks).toHaveLength(1);
    expect(configuration.webhooks[0]).toMatchObject({
      name: 'podmutation.agent.cloudpilot.ai',
      admissionReviewVersions: ['v1'],
      sideEffects: 'NoneOnDryRun',
      failurePolicy: 'Ignore',
      timeoutSeconds: 5,
      reinvocationPolicy: 'Never',
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
    });
  });

  it('skips kube-system and namespaces labelled podmutation.agent.cloudpilot.ai/ignore=true', () => {
    expect(webhookOf().namespaceSelector).toEqual({
      matchExpressions: [
        { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] },
        { key: 'podmutation.agent.cloudpilot.ai/ignore', operator: 'NotIn', values: ['true'] },
      ],
    });
  });

  it('points at the admission route: the base URL, /admit/ and the token', () => {
    expect(webhookOf().clientConfig.url).toBe(`${BASE}/admit/${TOKEN}`);
  });

  it('trims trailing slashes of the base URL and keeps its path', () => {
    expect(webhookOf({ url: `${BASE}/prod///` }).clientConfig.url).toBe(`${BASE}/prod/admit/${TOKEN}`);
  });

  it('uses failurePolicy Fail when asked', () => {
    expect(webhookOf({ failurePolicy: 'Fail' }).failurePolicy).toBe('Fail');
  });

  it('refuses a failurePolicy other than Ignore or Fail', () => {
    expect(() => webhookOf({ failurePolicy: 'ignore' as never })).toThrow(
      /failurePolicy must be Ignore or Fail \(got "ignore"\)/,
    );
  });

  it.each([1, 30])('accepts a timeout of %i seconds', (timeoutSeconds) => {
    expect(webhookOf({ timeoutSeconds }).timeoutSeconds).toBe(timeoutSeconds);
  });

  it.each([0, 31, 2.5, Number.NaN])('refuses a timeout of %s seconds, naming the range 1 to 30', (timeoutSeconds) => {
    expect(() => webhookOf({ timeoutSeconds })).toThrow(
      /timeoutSeconds must be a whole number of seconds from 1 to 30/,
    );
  });

  it('uses the given name for the configuration and its webhook', () => {
    const configuration = renderWebhookConfiguration({ ...options, name: 'pods.staging.example.com' });
    expect([configuration.metadata.name, configuration.webhooks[0]!.name]).toEqual([
      'pods.staging.example.com',
      'pods.staging.example.com',
    ]);
  });

  it('refuses a name that is not a fully qualified DNS name', () => {
    expect(() => webhookOf({ name: 'podmutation' })).toThrow(/at least three dot-separated labels/);
  });

  it('is pure: the same options render the same configuration', () => {
    expect(renderWebhookConfiguration(options)).toEqual(renderWebhookConfiguration({ ...options }));
  });
});

describe('the base URL', () => {
  it.each([
    ['plain http', 'http://abc123.execute-api.eu-west-1.amazonaws.com', /must use https \(got http\)/],
    ['a query', `${BASE}/prod?stage=1`, /must not contain a query/],
    ['an empty query', `${BASE}/?`, /must not contain a query/],
    ['a fragment', `${BASE}/#admit`, /must not contain a fragment/],
    [
      'user information',
      'https://admin:hunter2@abc123.execute-api.eu-west-1.amazonaws.com',
      /must not contain user information/,
    ],
    [
      'empty user information',
      'https://@abc123.execute-api.eu-west-1.amazonaws.com',
      /must not contain user information/,
    ],
    ['no scheme', 'abc123.execute-api.eu-west-1.amazonaws.com', /is not a valid URL/],
    ['the admission route already appended', `${BASE}/admit/${TOKEN}`, /without \/admit\/\{token\}/],
    ['whitespace', ` ${BASE}`, /whitespace/],
  ])('is refused with %s', (_case, url, message) => {
    expect(() => renderWebhookConfiguration({ ...options, url })).toThrow(message);
  });

  it('is refused with a ConfigurationError', () => {
    expect(() => renderWebhookConfiguration({ ...options, url: 'http://example.com' })).toThrow(ConfigurationError);
  });

  it('never appears with its user information in the error', () => {
    expect(() => renderWebhookConfiguration({ ...options, url: 'https://admin:hunter2@example.com' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') as unknown }),
    );
  });
});

describe('the token', () => {
  it.each([
    ['shorter than 32 characters', TOKEN.slice(0, 31)],
    ['a path separator', `${TOKEN.slice(0, 31)}/`],
    ['percent-encoding', `${TOKEN}%2F`],
    ['a dot segment', `${TOKEN.slice(0, 30)}..`],
    ['empty', ''],
  ])('is refused when %s', (_case, token) => {
    expect(() => renderWebhookConfiguration({ ...options, token })).toThrow(
      /token must be 32 to 256 characters from A-Z, a-z, 0-9, "-" and "_"/,
    );
  });

  it('states the entropy it requires', () => {
    expect(() => renderWebhookConfiguration({ ...options, token: 'short' })).toThrow(/128 bits/);
  });

  it('never appears in the error', () => {
    const token = 'not-long-enough-secret';
    expect(() => renderWebhookConfiguration({ ...options, token })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(token) as unknown }),
    );
  });

  it('may use the whole base64url alphabet', () => {
    const token = 'abcXYZ012-_abcXYZ012-_abcXYZ012-_';
    expect(webhookOf({ token }).clientConfig.url).toBe(`${BASE}/admit/${token}`);
  });
});

describe('the CA bundle', () => {
  // A PEM certificate's shape; the renderer checks the form, the CLI parses the certificate (test/cli).
  const PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIJAO3p\nZm9vYmFy\n-----END CERTIFICATE-----\n';

  it('is left out when none is given, so the API server uses its own trust store', () => {
    expect(webhookOf().clientConfig).not.toHaveProperty('caBundle');
  });

  it('is carried as base64 of the PEM, as clientConfig.caBundle takes it', () => {
    const bundle = webhookOf({ caBundle: `${PEM}${PEM}` }).clientConfig.caBundle!;
    expect(Buffer.from(bundle, 'base64').toString('utf8')).toBe(`${PEM}${PEM}`);
  });

  it.each([
    ['text that is not PEM', 'not a certificate', /must be PEM certificates/],
    ['an empty file', '', /must be PEM certificates/],
    ['a certificate followed by other text', `${PEM}trailing`, /must be PEM certificates/],
    ['a private key', `${PEM}-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n`, /holds a private key/],
  ])('refuses %s with a ConfigurationError', (_case, caBundle, message) => {
    expect(() => webhookOf({ caBundle })).toThrow(ConfigurationError);
    expect(() => webhookOf({ caBundle })).toThrow(message);
  });
});

describe('webhookConfigurationYaml', () => {
  it('prints the rendered configuration as YAML', () => {
    expect(parse(webhookConfigurationYaml(options))).toEqual(renderWebhookConfiguration(options));
  });

  it('warns in a header comment that the file holds the token', () => {
    expect(webhookConfigurationYaml(options)).toMatch(/^# .*\n# The URL carries the webhook token/);
  });
});

/** Evaluates the named match condition as the API server does, with object, oldObject and request bound. */
function conditionFor(name: string, pod: object): unknown {
  const condition = webhookOf().matchConditions.find((entry) => entry.name === name);
  if (condition === undefined) throw new Error(`no match condition ${name}`);
  const request = {
    uid: '0f7a',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    operation: 'CREATE',
    namespace: 'production',
    object: pod,
  };
  const outcome = evaluateCel(condition.expression, {
    object: toCelInput(pod),
    oldObject: null,
    request: toCelInput(request),
  });
  if (!outcome.ok) throw new Error(outcome.error);
  return outcome.value;
}

describe('the DaemonSet match condition', () => {
  function calledFor(ownerReferences?: readonly object[]): unknown {
    return conditionFor('skip-daemonset-pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: 'web-7d4b9c-',
        namespace: 'production',
        ...(ownerReferences === undefined ? {} : { ownerReferences }),
      },
      spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
    });
  }

  const owner = (kind: string, controller?: boolean) => ({
    apiVersion: 'apps/v1',
    kind,
    name: 'owner',
    uid: '4c1e',
    ...(controller === undefined ? {} : { controller }),
  });

  it('is false for a Pod whose controller is a DaemonSet, so the webhook is not called', () => {
    expect(calledFor([owner('DaemonSet', true)])).toBe(false);
  });

  it('is true for a Pod whose controller is a ReplicaSet', () => {
    expect(calledFor([owner('ReplicaSet', true)])).toBe(true);
  });

  it('is true for a Pod without ownerReferences', () => {
    expect(calledFor()).toBe(true);
  });

  it('is true for a Pod that a DaemonSet references without being its controller', () => {
    expect(calledFor([owner('DaemonSet', false), owner('ReplicaSet', true)])).toBe(true);
  });

  it('is true for a DaemonSet reference that does not say whether it is the controller', () => {
    expect(calledFor([owner('DaemonSet')])).toBe(true);
  });
});

describe('the bound-Pod match condition', () => {
  function calledFor(spec: object, annotations?: Record<string, string>): unknown {
    return conditionFor('skip-bound-pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'production', ...(annotations === undefined ? {} : { annotations }) },
      spec: { containers: [{ name: 'web', image: 'nginx:1.27' }], ...spec },
    });
  }

  it('is false for a Pod created with spec.nodeName, so the webhook is not called', () => {
    expect(calledFor({ nodeName: 'ip-10-0-1-23.eu-west-1.compute.internal' })).toBe(false);
  });

  it('is false for a mirror Pod, which the API server admits only with spec.nodeName', () => {
    expect(calledFor({ nodeName: 'node-1' }, { 'kubernetes.io/config.mirror': '3c0a5a1e' })).toBe(false);
  });

  it.each([
    ['without spec.nodeName', {}],
    ['with an empty spec.nodeName', { nodeName: '' }],
  ])('is true for a Pod %s, which the scheduler binds', (_name, spec) => {
    expect(calledFor(spec)).toBe(true);
  });
});
