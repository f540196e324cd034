import { WEBHOOK_DEFAULTS, webhookConfigurationYaml } from './configuration.ts';
import type { FailurePolicy } from './types.ts';

export { WEBHOOK_DEFAULTS, webhookConfigurationYaml };
export type { FailurePolicy };
