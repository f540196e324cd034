import { WEBHOOK_DEFAULTS, renderWebhookConfiguration, webhookConfigurationYaml } from './configuration.ts';
import type {
  FailurePolicy,
  MatchCondition,
  MutatingWebhook,
  MutatingWebhookConfiguration,
  RuleWithOperations,
  WebhookConfigurationOptions,
} from './types.ts';

export { WEBHOOK_DEFAULTS, renderWebhookConfiguration, webhookConfigurationYaml };
export type {
  FailurePolicy,
  MatchCondition,
  MutatingWebhook,
  MutatingWebhookConfiguration,
  RuleWithOperations,
  WebhookConfigurationOptions,
};
