/** The local webhook server (`podmutation serve`) and its rule sources. */
import { createClusterRuleSource } from './cluster-source.ts';
import { CONNECTION_LIMITS, LOCAL_SERVER_DEFAULTS, MAX_CONNECTIONS, startLocalServer } from './server.ts';
import { createFileRuleSource } from './source.ts';
import type { ClusterRuleSourceOptions } from './cluster-source.ts';
import type { LocalServer, LocalServerOptions, TlsFiles } from './server.ts';
import type { FileRuleSourceOptions, RulePublication, RuleSource } from './source.ts';

export {
  startLocalServer,
  createFileRuleSource,
  createClusterRuleSource,
  CONNECTION_LIMITS,
  MAX_CONNECTIONS,
  LOCAL_SERVER_DEFAULTS,
};
export type {
  LocalServer,
  LocalServerOptions,
  TlsFiles,
  RuleSource,
  RulePublication,
  FileRuleSourceOptions,
  ClusterRuleSourceOptions,
};
