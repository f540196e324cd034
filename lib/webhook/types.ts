import type { LabelSelector } from '../scheduling/index.ts';

/** How the API server treats a call that fails: Ignore admits the Pod unchanged, Fail rejects it. */
export type FailurePolicy = 'Ignore' | 'Fail';

/** Options of `renderWebhookConfiguration`; only `url` and `token` are required. */
export interface WebhookConfigurationOptions {
  /** Base URL of the HTTP API (https, no user info, query or fragment); a path such as a stage is allowed. */
  readonly url: string;
  /** The webhook token, the last path segment of the admission route POST /admit/{token}. */
  readonly token: string;
  /** Default Ignore: an unreachable webhook never blocks Pod creation. */
  readonly failurePolicy?: FailurePolicy;
  /** Seconds the API server waits for an answer, 1..30; default 5. */
  readonly timeoutSeconds?: number;
  /** Name of the configuration and of its webhook; default podmutation.agent.cloudpilot.ai. */
  readonly name?: string;
  /**
   * PEM certificates of a private CA that signed the endpoint's certificate (kind, a local `podmutation serve`);
   * absent: the API server verifies the endpoint against its own trust store, as it does for API Gateway.
   */
  readonly caBundle?: string;
}

/** An admissionregistration.k8s.io/v1 RuleWithOperations. */
interface RuleWithOperations {
  readonly operations: readonly string[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  readonly scope: '*' | 'Cluster' | 'Namespaced';
}

/** An admissionregistration.k8s.io/v1 MatchCondition (a CEL expression over object, oldObject, request). */
interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

/** An admissionregistration.k8s.io/v1 MutatingWebhook called through a URL. */
interface MutatingWebhook {
  readonly name: string;
  readonly admissionReviewVersions: readonly string[];
  readonly clientConfig: { readonly url: string; readonly caBundle?: string };
  readonly rules: readonly RuleWithOperations[];
  readonly failurePolicy: FailurePolicy;
  readonly matchPolicy: 'Equivalent' | 'Exact';
  readonly sideEffects: 'None' | 'NoneOnDryRun';
  readonly timeoutSeconds: number;
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
  readonly namespaceSelector: LabelSelector;
  readonly matchConditions: readonly MatchCondition[];
}

/** An admissionregistration.k8s.io/v1 MutatingWebhookConfiguration. */
export interface MutatingWebhookConfiguration {
  readonly apiVersion: 'admissionregistration.k8s.io/v1';
  readonly kind: 'MutatingWebhookConfiguration';
  readonly metadata: { readonly name: string; readonly labels: Readonly<Record<string, string>> };
  readonly webhooks: readonly MutatingWebhook[];
}
