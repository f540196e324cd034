/** The HTTP contract of the admission endpoint, over API Gateway HTTP API (payload 2.0) events. */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  answerAdmissionRequest,
  readAdmissionReview,
  summarizeVerdict,
  type AdmissionRequest,
} from '../admission/index.ts';
import { errorLogFields, MalformedInputError } from '../errors/index.ts';
import type { Logger, Metrics } from '../observability/index.ts';
import { previewInput } from '../json/index.ts';
import type { CachedSnapshot } from './snapshot-cache.ts';
import type { Enforcement } from '../api/index.ts';
import type { StampSource } from '../stamp/index.ts';
import { DEFAULT_MAX_BODY_BYTES } from './config.ts';
import type { AdmissionRules } from './admission-rules.ts';
import { createTokenComparer, type TokenSource } from './token.ts';
import { diversitySequence, SEQUENCE_DEADLINE_MS, type SequenceContext } from './diversity-sequence.ts';
import type { DiversityCounterStore } from '../store/index.ts';

/** What the handler depends on; every adapter is injected so tests run it against real stores. */
interface AdmissionHandlerDeps {
  /**
   * The admission cache (createAdmissionRulesCache): rules and managed steps; rejects when no usable rules exist
   * (cold start with the store down, too stale).
   */
  readonly rules: { get(): Promise<CachedSnapshot<AdmissionRules>> };
  /** The accepted path tokens (createTokenSource): AWSCURRENT, and AWSPREVIOUS while a rotation overlaps. */
  readonly acceptedTokens: TokenSource;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Largest decoded body accepted (default 3 MiB). */
  readonly maxBodyBytes?: number;
  /** The deployment's switch (ENFORCEMENT): `audit` audits every customer rule; default enforce, each rule decides. */
  readonly enforcement?: Enforcement;
  /** The stamps' digests under the stamp key (createStampSource); without it Pods are neither stamped nor read by their stamp. */
  readonly stamps?: StampSource;
  /** Monotonic milliseconds, for durationMs (default performance.now). */
  readonly clock?: () => number;
  /** The counters that number Diversity Pods; without them every Diversity Pod is drawn at random, with a warning. */
  readonly diversityCounters?: Pick<DiversityCounterStore, 'next'>;
  /** Longest a review waits for its Diversity counter, in milliseconds (default SEQUENCE_DEADLINE_MS). */
  readonly sequenceDeadlineMs?: number;
}

/** An API Gateway HTTP API handler: one event in, one structured result out; never throws. */
type AdmissionHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

// The route template is logged in place of the path, which carries the token.
const ROUTE = 'POST /admit/{token}';
const JSON_HEADERS = { 'content-type': 'application/json' } as const;
// Anchored as the API Gateway route is: /foo/admit/<token> and //admit/<token> carry no token.
const TOKEN_IN_PATH = /^\/admit\/([^/]+)\/?$/;

function errorBody(error: string, message: string): string {
  return JSON.stringify({ error, message });
}

function errorResult(statusCode: number, body: string, headers: Readonly<Record<string, string>> = JSON_HEADERS) {
  return { statusCode, headers: { ...headers }, body, isBase64Encoded: false };
}

const FORBIDDEN_BODY = errorBody('Forbidden', 'the request is not authorized');
const METHOD_NOT_ALLOWED_BODY = errorBody('MethodNotAllowed', 'only POST is allowed on /admit/{token}');
const INTERNAL_ERROR_BODY = errorBody('InternalError', 'the webhook could not evaluate the request');

/** A header value by lower-case name; API Gateway lower-cases names in payload 2.0, hand-built events may not. */
function headerValue(event: APIGatewayProxyEventV2, name: string): string | undefined {
  const headers = event.headers ?? {};
  const exact = headers[name];
  if (exact !== undefined) return exact;
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}

/** True for application/json with no charset or a UTF-8 one (RFC 8259: JSON exchanged between systems is UTF-8). */
function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const [mediaType = '', ...parameters] = value.split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') return false;
  return parameters.every((parameter) => {
    const [name = '', parameterValue = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') return true;
    return /^"?utf-8"?$/i.test(parameterValue.trim());
  });
}

function presentedToken(event: APIGatewayProxyEventV2): string | undefined {
  const fromRoute = event.pathParameters?.token;
  if (fromRoute !== undefined && fromRoute !== '') return fromRoute;
  return TOKEN_IN_PATH.exec(event.rawPath ?? '')?.[1];
}

type DecodedBody = { readonly text: string } | { readonly tooLarge: number };

/**
 * The body as text, or its (lower bound of) size when above the limit. Raw lengths that already prove the body too
 * big are rejected before any decoding: a UTF-16 code unit is at least one UTF-8 byte, and four characters of
 * API Gateway's base64 (no line breaks) are three bytes, less at most two of padding at the end.
 */
function decodeBody(event: APIGatewayProxyEventV2, maxBytes: number): DecodedBody {
  const raw = event.body ?? '';
  if (event.isBase64Encoded) {
    const lowerBound = Math.floor(raw.length / 4) * 3 - 2;
    if (lowerBound > maxBytes) return { tooLarge: lowerBound };
    const bytes = Buffer.from(raw, 'base64');
    if (bytes.length > maxBytes) return { tooLarge: bytes.length };
    return { text: bytes.toString('utf8') };
  }
  if (raw.length > maxBytes) return { tooLarge: raw.length };
  const size = Buffer.byteLength(raw, 'utf8');
  return size > maxBytes ? { tooLarge: size } : { text: raw };
}

/** An error's name and message for a log line; V8's JSON syntax messages quote the input, so they are left out. */
function loggableError(error: unknown): ReturnType<typeof errorLogFields> {
  if (error instanceof MalformedInputError && error.cause instanceof SyntaxError) {
    return { ...errorLogFields(error), errorMessage: 'AdmissionReview is not valid JSON' };
  }
  return errorLogFields(error);
}

function threeDecimals(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/**
 * The admission endpoint. Checks in order: method (405, Allow: POST), path token (403, constant-time), body size
 * (413), content type (415), rules (500 when none are usable: never "allowed" without rules), AdmissionReview
 * (400 MalformedInputError), then answers 200 with answerAdmissionReview's body byte for byte. Logs one line and
 * emits metrics per request: Admissions, Mutations, Denials, UnschedulableMutations, HeldSteps, StaleRules,
 * RulesAgeSeconds, DiversityFallbacks (a Diversity Pod drawn at random: a dry run, a counter failed or late) for
 * answered reviews, Rejected for 4xx, Errors for 500. A Diversity Pod's counter is read before its review.
 */
function createAdmissionHandler(deps: AdmissionHandlerDeps): AdmissionHandler {
  const context: HandlerContext = {
    deps,
    maxBodyBytes: deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    clock: deps.clock ?? (() => performance.now()),
    tokenMatches: createTokenComparer(),
  };
  return async (event) => {
    const started = context.clock();
    const request = await admitted(context, event, started);
    if ('statusCode' in request) return request;
    // Read beside the rules (a key set, refreshed as the token is); settled here, so no rejection goes unhandled.
    const stampKey = deps.stamps?.().then(
      (stamps) => ({ stamps }),
      (error: unknown) => ({ error }),
    );
    let snapshot: CachedSnapshot<AdmissionRules>;
    try {
      snapshot = await deps.rules.get();
    } catch (error) {
      return failed(context, started, 'rules unavailable', error);
    }
    const key = await stampKey;
    // Never a Pod admitted without its stamp: a later review of it would not be exact.
    if (key !== undefined && 'error' in key) return failed(context, started, 'stamp key unavailable', key.error);
    let review: AdmissionRequest;
    try {
      review = readAdmissionReview(request.text);
    } catch (error) {
      return reviewFailed(context, started, error);
    }
    const sequence = await diversitySequence(
      {
        placement: snapshot.value.placement,
        counters: deps.diversityCounters,
        deadlineMs: deps.sequenceDeadlineMs ?? SEQUENCE_DEADLINE_MS,
      },
      review,
    );
    return answered(context, started, review, { snapshot, stamps: key?.stamps, sequence });
  };
}

/** What the steps of one handler share: its dependencies, limits, clock and token comparer. */
interface HandlerContext {
  readonly deps: AdmissionHandlerDeps;
  readonly maxBodyBytes: number;
  readonly clock: () => number;
  readonly tokenMatches: ReturnType<typeof createTokenComparer>;
}

type HandlerResult = APIGatewayProxyStructuredResultV2 & { readonly statusCode: number };

/** A 4xx answer: its status, the reason logged, its body and any headers besides the JSON ones. */
interface Rejection {
  readonly statusCode: number;
  readonly reason: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A 4xx answer, logged and counted in Rejected. */
function rejected(
  context: HandlerContext,
  started: number,
  { statusCode, reason, body, headers }: Rejection,
): HandlerResult {
  context.deps.metrics.addMetric('Rejected', 'Count', 1);
  context.deps.logger.warn('admission request rejected', {
    route: ROUTE,
    status: statusCode,
    reason,
    durationMs: threeDecimals(context.clock() - started),
  });
  return errorResult(statusCode, body, headers);
}

/** A 500 answer, logged and counted in Errors. */
function failed(context: HandlerContext, started: number, reason: string, error: unknown): HandlerResult {
  context.deps.metrics.addMetric('Errors', 'Count', 1);
  context.deps.logger.error('admission failed', {
    route: ROUTE,
    status: 500,
    decision: 'error',
    reason,
    ...loggableError(error),
    durationMs: threeDecimals(context.clock() - started),
  });
  return errorResult(500, INTERNAL_ERROR_BODY);
}

/** The request's body text once method, token, size and content type pass; else the answer that refuses it. */
async function admitted(
  context: HandlerContext,
  event: APIGatewayProxyEventV2,
  started: number,
): Promise<{ readonly text: string } | HandlerResult> {
  const { deps, maxBodyBytes, tokenMatches } = context;
  if (event.requestContext?.http?.method !== 'POST') {
    return rejected(context, started, {
      statusCode: 405,
      reason: 'method not allowed',
      body: METHOD_NOT_ALLOWED_BODY,
      headers: { ...JSON_HEADERS, allow: 'POST' },
    });
  }
  const token = presentedToken(event);
  let matches: boolean;
  try {
    matches = tokenMatches(token, await deps.acceptedTokens());
    // A token rotated a moment ago is not known yet: re-read once (the source rate-limits it) before a 403.
    if (!matches && token !== undefined) matches = tokenMatches(token, await deps.acceptedTokens('mismatch'));
  } catch (error) {
    return failed(context, started, 'webhook token unavailable', error);
  }
  if (!matches) {
    return rejected(context, started, {
      statusCode: 403,
      reason: token === undefined ? 'missing token' : 'wrong token',
      body: FORBIDDEN_BODY,
    });
  }
  const body = decodeBody(event, maxBodyBytes);
  if ('tooLarge' in body) {
    const message = `request body is at least ${body.tooLarge} bytes, above the limit of ${maxBodyBytes} bytes`;
    return rejected(context, started, {
      statusCode: 413,
      reason: 'body too large',
      body: errorBody('PayloadTooLarge', message),
    });
  }
  const contentType = headerValue(event, 'content-type');
  if (!isJsonContentType(contentType)) {
    const message = `content-type must be application/json (got ${contentType === undefined ? 'none' : previewInput(contentType)})`;
    return rejected(context, started, {
      statusCode: 415,
      reason: 'unsupported content type',
      body: errorBody('UnsupportedMediaType', message),
    });
  }
  return body;
}

/** The answer to a review that could not be read (400) or evaluated (500). */
function reviewFailed(context: HandlerContext, started: number, error: unknown): HandlerResult {
  const { deps, clock } = context;
  if (!(error instanceof MalformedInputError)) return failed(context, started, 'evaluation failed', error);
  deps.metrics.addMetric('Rejected', 'Count', 1);
  deps.logger.warn('admission request rejected', {
    route: ROUTE,
    status: 400,
    reason: 'malformed AdmissionReview',
    ...loggableError(error),
    durationMs: threeDecimals(clock() - started),
  });
  return errorResult(400, errorBody(error.name, error.message));
}

/** What a review is answered under: the rules' snapshot, the stamps (none offline), and the Pod's sequence number. */
interface AnsweredUnder {
  readonly snapshot: CachedSnapshot<AdmissionRules>;
  readonly stamps: Awaited<ReturnType<StampSource>> | undefined;
  readonly sequence: SequenceContext;
}

/** The review answered under the rules: 200 with its body, 400 for a malformed review, 500 when evaluation fails. */
function answered(
  context: HandlerContext,
  started: number,
  request: AdmissionRequest,
  under: AnsweredUnder,
): HandlerResult {
  const { snapshot, stamps, sequence } = under;
  const { deps } = context;
  let answer: ReturnType<typeof answerAdmissionRequest>;
  try {
    answer = answerAdmissionRequest(request, snapshot.value, {
      managedSteps: snapshot.value.managedSteps,
      enforcement: deps.enforcement,
      ...(snapshot.value.capacity === undefined ? {} : { capacity: snapshot.value.capacity }),
      ...(stamps === undefined ? {} : { stamps }),
      sequence: sequence.context,
    });
  } catch (error) {
    return reviewFailed(context, started, error);
  }
  logAnswer(context, started, summarizeVerdict(answer.verdict), under);
  return { statusCode: 200, headers: { ...JSON_HEADERS }, body: answer.body, isBase64Encoded: false };
}

/** The metrics and the log line of an answered review. */
function logAnswer(
  context: HandlerContext,
  started: number,
  summary: ReturnType<typeof summarizeVerdict>,
  { snapshot, sequence }: AnsweredUnder,
): void {
  const { metrics, logger } = context.deps;
  const { sequence: number, sequenceUnavailable } = sequence.context;
  if (sequenceUnavailable !== undefined) metrics.addMetric('DiversityFallbacks', 'Count', 1);
  metrics.addMetric('Admissions', 'Count', 1);
  if (summary.decision === 'mutated') metrics.addMetric('Mutations', 'Count', 1);
  if (summary.decision === 'denied') metrics.addMetric('Denials', 'Count', 1);
  if (summary.audited !== undefined) metrics.addMetric('AuditedMatches', 'Count', summary.audited.length);
  if (summary.unschedulable === true) metrics.addMetric('UnschedulableMutations', 'Count', 1);
  if (summary.held !== undefined) metrics.addMetric('HeldSteps', 'Count', summary.held.length);
  if (snapshot.stale) metrics.addMetric('StaleRules', 'Count', 1);
  metrics.addMetric('RulesAgeSeconds', 'Seconds', snapshot.ageSeconds);
  logger.info('admission', {
    route: ROUTE,
    status: 200,
    ...summary,
    snapshotVersion: snapshot.version,
    ...(snapshot.placementVersion === undefined ? {} : { placementVersion: snapshot.placementVersion }),
    ...(snapshot.value.capacity?.problem === undefined ? {} : { capacityProblem: snapshot.value.capacity.problem }),
    ...(number === undefined ? {} : { diversitySequence: number }),
    ...(sequenceUnavailable === undefined ? {} : { diversityFallback: sequenceUnavailable }),
    ...(sequence.failure === undefined ? {} : errorLogFields(sequence.failure)),
    cacheAgeSeconds: threeDecimals(snapshot.ageSeconds),
    stale: snapshot.stale,
    durationMs: threeDecimals(context.clock() - started),
  });
}

export { createAdmissionHandler };
export type { AdmissionHandler };
