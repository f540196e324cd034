/** The local webhook server (`podmutation serve`) and its rule sources. */
import { createClusterRuleSource } from './cluster-source.ts';
import { CONNECTION_LIMITS, MAX_CONNECTIONS, startLocalServer } from './server.ts';
import { createFileRuleSource } from './source.ts';

import type { TlsFiles } from './server.ts';
import type { RuleSource } from './source.ts';

export { startLocalServer, createFileRuleSource, createClusterRuleSource, CONNECTION_LIMITS, MAX_CONNECTIONS };
export type { TlsFiles, RuleSource };
