/** The admission endpoint's HTTP contract, its token source, the cached compiled rules and its configuration; independent of middy and Lambda. */
import { readAdmissionConfig, DEFAULT_MAX_BODY_BYTES } from './config.ts';
import { createAdmissionHandler } from './handler.ts';
import { createAdmissionRulesCache } from './admission-rules.ts';
import { createSnapshotCache } from './snapshot-cache.ts';
import {
  checkedToken,
  createTokenSource,
  generateToken,
  ignoredTokenVersionReporter,
  readCurrentToken,
  tokenRefreshFailureReporter,
} from './token.ts';
import type { AdmissionConfig } from './config.ts';
import type { AdmissionHandler, AdmissionHandlerDeps } from './handler.ts';
import type { AdmissionRules, AdmissionRulesCacheOptions } from './admission-rules.ts';
import type { CachedSnapshot, SnapshotCache, SnapshotCacheOptions, SnapshotCacheStats } from './snapshot-cache.ts';
import type { SecretReader, TokenSource, TokenSourceConfig, TokenSourceOptions } from './token.ts';

export {
  createAdmissionHandler,
  createAdmissionRulesCache,
  createSnapshotCache,
  createTokenSource,
  checkedToken,
  generateToken,
  readCurrentToken,
  tokenRefreshFailureReporter,
  ignoredTokenVersionReporter,
  readAdmissionConfig,
  DEFAULT_MAX_BODY_BYTES,
};
export type {
  AdmissionConfig,
  AdmissionRules,
  AdmissionRulesCacheOptions,
  CachedSnapshot,
  SnapshotCache,
  SnapshotCacheOptions,
  SnapshotCacheStats,
  AdmissionHandler,
  AdmissionHandlerDeps,
  SecretReader,
  TokenSource,
  TokenSourceConfig,
  TokenSourceOptions,
};
