import { WEBHOOK_DEFAULTS, renderWebhookConfiguration, webhookConfigurationYaml } from './configuration.ts';
import type { FailurePolicy, MutatingWebhookConfiguration, WebhookConfigurationOptions } from './types.ts';

export { WEBHOOK_DEFAULTS, renderWebhookConfiguration, webhookConfigurationYaml };
export type { FailurePolicy, MutatingWebhookConfiguration, WebhookConfigurationOptions };
