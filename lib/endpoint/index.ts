/** The admission endpoint's HTTP contract, its token source, the cached compiled rules and its configuration; independent of middy and Lambda. */
import { readAdmissionConfig, DEFAULT_MAX_BODY_BYTES } from './config.ts';
import { createAdmissionHandler } from './handler.ts';
import { createAdmissionRulesCache } from './admission-rules.ts';

import {
  checkedToken,
  createTokenSource,
  generateToken,
  ignoredTokenVersionReporter,
  readCurrentToken,
  tokenRefreshFailureReporter,
} from './token.ts';

import type { AdmissionHandler } from './handler.ts';

export {
  createAdmissionHandler,
  createAdmissionRulesCache,
  createTokenSource,
  checkedToken,
  generateToken,
  readCurrentToken,
  tokenRefreshFailureReporter,
  ignoredTokenVersionReporter,
  readAdmissionConfig,
  DEFAULT_MAX_BODY_BYTES,
};
export type { AdmissionHandler };
