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

function errorResult(statusCode: number, body: string, headers: Readonly<Record<string, string>>) {
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
  const pipeline: Pipeline = {
    deps,
    maxBodyBytes: deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    clock: deps.clock ?? (() => performance.now()),
    tokenMatches: createTokenComparer(),
  };
  return async (event) => {
    const started = pipeline.clock();
    const refused = (refusal: Refusal): HandlerResult => refuse(pipeline, started, refusal);
    const wrongMethod = checkMethod(event);
    if (wrongMethod !== undefined) return refused(wrongMethod);
    const wrongToken = await checkToken(pipeline, event);
    if (wrongToken !== undefined) return refused(wrongToken);
    const body = readBody(event, pipeline.maxBodyBytes);
    if (body instanceof Refusal) return refused(body);
    const wrongType = checkContentType(event);
    if (wrongType !== undefined) return refused(wrongType);
    const rules = await loadRules(deps);
    if (rules instanceof Refusal) return refused(rules);
    const review = readReview(body);
    if (review instanceof Refusal) return refused(review);
    const sequence = await diversitySequence(
      {
        placement: rules.snapshot.value.placement,
        counters: deps.diversityCounters,
        deadlineMs: deps.sequenceDeadlineMs ?? SEQUENCE_DEADLINE_MS,
      },
      review,
    );
    const answer = answerReview(deps, { review, rules, sequence });
    if (answer instanceof Refusal) return refused(answer);
    recordAnswer(pipeline, started, { answer, rules, sequence });
    return { statusCode: 200, headers: { ...JSON_HEADERS }, body: answer.body, isBase64Encoded: false };
  };
}

/** What every step of one handler reads: its dependencies, limits, clock and token comparer. */
interface Pipeline {
  readonly deps: AdmissionHandlerDeps;
  readonly maxBodyBytes: number;
  readonly clock: () => number;
  readonly tokenMatches: ReturnType<typeof createTokenComparer>;
}

type HandlerResult = APIGatewayProxyStructuredResultV2 & { readonly statusCode: number };

/** A request's answer other than 200: its status, the reason logged, its body, its headers and the error behind it. */
interface RefusalFields {
  readonly status: number;
  readonly reason: string;
  readonly body: string;
  /** The answer's headers (default: the JSON content type). */
  readonly headers?: Readonly<Record<string, string>>;
  /** What failed, logged by name and message; always present on a 500. */
  readonly error?: unknown;
}

/** Why a step refused the request; the pipeline stops at the first one. */
class Refusal implements RefusalFields {
  readonly status: number;
  readonly reason: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly error?: unknown;

  constructor({ status, reason, body, headers = JSON_HEADERS, error }: RefusalFields) {
    this.status = status;
    this.reason = reason;
    this.body = body;
    this.headers = headers;
    if (error !== undefined) this.error = error;
  }

  /** A 500: the webhook could not evaluate the request, because of `error`. */
  static failure(reason: string, error: unknown): Refusal {
    return new Refusal({ status: 500, reason, body: INTERNAL_ERROR_BODY, error });
  }
}

/** A refusal's answer, logged and counted: a 4xx in Rejected with a warning, a 500 in Errors with an error line. */
function refuse(pipeline: Pipeline, started: number, refusal: Refusal): HandlerResult {
  const { metrics, logger } = pipeline.deps;
  const { status, reason, error } = refusal;
  if (status >= 500) {
    metrics.addMetric('Errors', 'Count', 1);
    logger.error('admission failed', {
      route: ROUTE,
      status,
      decision: 'error',
      reason,
      ...loggableError(error),
      durationMs: threeDecimals(pipeline.clock() - started),
    });
  } else {
    metrics.addMetric('Rejected', 'Count', 1);
    logger.warn('admission request rejected', {
      route: ROUTE,
      status,
      reason,
      ...(error === undefined ? {} : loggableError(error)),
      durationMs: threeDecimals(pipeline.clock() - started),
    });
  }
  return errorResult(status, refusal.body, refusal.headers);
}

/** 405 (Allow: POST) for any method but POST. */
function checkMethod(event: APIGatewayProxyEventV2): Refusal | undefined {
  if (event.requestContext?.http?.method === 'POST') return undefined;
  return new Refusal({
    status: 405,
    reason: 'method not allowed',
    body: METHOD_NOT_ALLOWED_BODY,
    headers: { ...JSON_HEADERS, allow: 'POST' },
  });
}

/** 403 unless the path carries an accepted token (compared in constant time); 500 when the tokens cannot be read. */
async function checkToken(pipeline: Pipeline, event: APIGatewayProxyEventV2): Promise<Refusal | undefined> {
  const { deps, tokenMatches } = pipeline;
  const token = presentedToken(event);
  let matches: boolean;
  try {
    matches = tokenMatches(token, await deps.acceptedTokens());
    // A token rotated a moment ago is not known yet: re-read once (the source rate-limits it) before a 403.
    if (!matches && token !== undefined) matches = tokenMatches(token, await deps.acceptedTokens('mismatch'));
  } catch (error) {
    return Refusal.failure('webhook token unavailable', error);
  }
  if (matches) return undefined;
  return new Refusal({
    status: 403,
    reason: token === undefined ? 'missing token' : 'wrong token',
    body: FORBIDDEN_BODY,
  });
}

/** The body as text, or 413 when it is above the limit. */
function readBody(event: APIGatewayProxyEventV2, maxBodyBytes: number): string | Refusal {
  const body = decodeBody(event, maxBodyBytes);
  if ('text' in body) return body.text;
  const message = `request body is at least ${body.tooLarge} bytes, above the limit of ${maxBodyBytes} bytes`;
  return new Refusal({ status: 413, reason: 'body too large', body: errorBody('PayloadTooLarge', message) });
}

/** 415 unless the body is declared application/json in UTF-8. */
function checkContentType(event: APIGatewayProxyEventV2): Refusal | undefined {
  const contentType = headerValue(event, 'content-type');
  if (isJsonContentType(contentType)) return undefined;
  const message = `content-type must be application/json (got ${contentType === undefined ? 'none' : previewInput(contentType)})`;
  return new Refusal({
    status: 415,
    reason: 'unsupported content type',
    body: errorBody('UnsupportedMediaType', message),
  });
}

/** What a review is answered under: the rules' snapshot and the stamps (none offline). */
interface LoadedRules {
  readonly snapshot: CachedSnapshot<AdmissionRules>;
  readonly stamps: Awaited<ReturnType<StampSource>> | undefined;
}

/** The usable rules and the stamp key, or 500 when either cannot be had: never "allowed" without them. */
async function loadRules(deps: AdmissionHandlerDeps): Promise<LoadedRules | Refusal> {
  // Read beside the rules (a key set, refreshed as the token is); settled here, so no rejection goes unhandled.
  const stampKey = deps.stamps?.().then(
    (stamps) => ({ stamps }),
    (error: unknown) => ({ error }),
  );
  let snapshot: CachedSnapshot<AdmissionRules>;
  try {
    snapshot = await deps.rules.get();
  } catch (error) {
    return Refusal.failure('rules unavailable', error);
  }
  const key = await stampKey;
  // Never a Pod admitted without its stamp: a later review of it would not be exact.
  if (key !== undefined && 'error' in key) return Refusal.failure('stamp key unavailable', key.error);
  return { snapshot, stamps: key?.stamps };
}

/** The review's request, or 400 for a malformed AdmissionReview. */
function readReview(text: string): AdmissionRequest | Refusal {
  try {
    return readAdmissionReview(text);
  } catch (error) {
    return reviewRefusal(error);
  }
}

/** The refusal of a review that could not be read (400 MalformedInputError) or evaluated (500). */
function reviewRefusal(error: unknown): Refusal {
  if (!(error instanceof MalformedInputError)) return Refusal.failure('evaluation failed', error);
  return new Refusal({
    status: 400,
    reason: 'malformed AdmissionReview',
    body: errorBody(error.name, error.message),
    error,
  });
}

/** A review with what it is answered under: its rules and stamps, and the Pod's sequence number. */
interface ReviewUnder {
  readonly review: AdmissionRequest;
  readonly rules: LoadedRules;
  readonly sequence: SequenceContext;
}

type Answer = ReturnType<typeof answerAdmissionRequest>;

/** The review answered under the rules, or 400 for a malformed review, 500 when evaluation fails. */
function answerReview(deps: AdmissionHandlerDeps, { review, rules, sequence }: ReviewUnder): Answer | Refusal {
  const { snapshot, stamps } = rules;
  try {
    return answerAdmissionRequest(review, snapshot.value, {
      managedSteps: snapshot.value.managedSteps,
      enforcement: deps.enforcement,
      ...(snapshot.value.capacity === undefined ? {} : { capacity: snapshot.value.capacity }),
      ...(stamps === undefined ? {} : { stamps }),
      sequence: sequence.context,
    });
  } catch (error) {
    return reviewRefusal(error);
  }
}

/** An answered review: its answer, with the rules and the sequence number it was answered under. */
interface AnswerRecord extends Omit<ReviewUnder, 'review'> {
  readonly answer: Answer;
}

/** The metrics and the log line of an answered review. */
function recordAnswer(pipeline: Pipeline, started: number, { answer, rules, sequence }: AnswerRecord): void {
  const { metrics, logger } = pipeline.deps;
  const { snapshot } = rules;
  const summary = summarizeVerdict(answer.verdict);
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
    durationMs: threeDecimals(pipeline.clock() - started),
  });
}

export { createAdmissionHandler };
export type { AdmissionHandler };
