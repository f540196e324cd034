import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createAdmissionHandler } from '../../lib/endpoint/index.ts';
import { StoreError } from '../../lib/errors/index.ts';
import { KEYLESS_STAMPS } from '../../lib/stamp/index.ts';
import { fixtureText } from '../support/fixtures.ts';
import {
  TOKEN,
  admissionEvent,
  annotatingRules,
  recordingLogger,
  recordingMetrics,
  type EventOptions,
} from './support.ts';

const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const SMALL_LIMIT = 16 * 1024;

/** A handler whose every source counts its reads; `failing` names the sources that reject. */
function countingHandler(failing: readonly ('tokens' | 'rules' | 'stamps')[] = []) {
  const reads = { tokens: 0, rules: 0, stamps: 0 };
  const read = <T>(source: keyof typeof reads, value: () => T): Promise<T> => {
    reads[source] += 1;
    if (failing.includes(source)) return Promise.reject(new StoreError(`the ${source} are unavailable`));
    return Promise.resolve(value());
  };
  const rules = annotatingRules();
  const logger = recordingLogger();
  const handler = createAdmissionHandler({
    rules: { get: () => read('rules', () => null).then(() => rules.get()) },
    acceptedTokens: () => read('tokens', () => [TOKEN]),
    stamps: () => read('stamps', () => KEYLESS_STAMPS),
    logger,
    metrics: recordingMetrics(),
    maxBodyBytes: SMALL_LIMIT,
  });
  return { handler, reads, logger };
}

/** An event whose body counts how often it is read. */
function watchedEvent(options: EventOptions): {
  readonly event: APIGatewayProxyEventV2;
  readonly bodyReads: () => number;
} {
  const event = admissionEvent(options);
  const body = event.body;
  let reads = 0;
  Object.defineProperty(event, 'body', {
    enumerable: true,
    get: () => {
      reads += 1;
      return body;
    },
  });
  return { event, bodyReads: () => reads };
}

describe('createAdmissionHandler runs its checks in order, each before anything the next one reads', () => {
  it('answers 405 to a wrong method without reading the tokens, even while they cannot be read', async () => {
    const { handler, reads } = countingHandler(['tokens']);

    const result = await handler(admissionEvent({ method: 'GET', token: 'wrong', body: REVIEW }));

    expect(result.statusCode).toBe(405);
    expect(reads).toEqual({ tokens: 0, rules: 0, stamps: 0 });
  });

  it('answers 403 to a wrong token with an oversized body without reading the body', async () => {
    const { handler } = countingHandler();
    const { event, bodyReads } = watchedEvent({ token: 'wrong', body: 'x'.repeat(SMALL_LIMIT + 1) });

    const result = await handler(event);

    expect(result.statusCode).toBe(403);
    expect(bodyReads()).toBe(0);
  });

  it('consults neither the rules nor the stamp key before the token passes, even while they are unusable', async () => {
    const { handler, reads } = countingHandler(['rules', 'stamps']);

    const result = await handler(admissionEvent({ token: 'wrong', body: REVIEW }));

    expect(result.statusCode).toBe(403);
    expect(reads.rules).toBe(0);
    expect(reads.stamps).toBe(0);
  });

  it('answers 413 to an oversized body of the wrong content type', async () => {
    const { handler } = countingHandler();

    const result = await handler(admissionEvent({ body: 'x'.repeat(SMALL_LIMIT + 1), contentType: 'text/plain' }));

    expect(result.statusCode).toBe(413);
  });

  it('answers 415 to a wrong content type without consulting the unusable rules', async () => {
    const { handler, reads } = countingHandler(['rules', 'stamps']);

    const result = await handler(admissionEvent({ body: REVIEW, contentType: 'text/plain' }));

    expect(result.statusCode).toBe(415);
    expect(reads).toEqual({ tokens: 1, rules: 0, stamps: 0 });
  });

  it('answers 500, not 400, to a malformed review while the rules are unusable: no review is read without rules', async () => {
    const { handler, logger } = countingHandler(['rules']);

    const result = await handler(admissionEvent({ body: 'this is not JSON' }));

    expect(result.statusCode).toBe(500);
    expect(logger.records.map(({ fields }) => fields['reason'])).toEqual(['rules unavailable']);
  });

  it('names the rules, not the stamp key, when both are unavailable', async () => {
    const { handler, reads, logger } = countingHandler(['rules', 'stamps']);

    const result = await handler(admissionEvent({ body: REVIEW }));

    expect(result.statusCode).toBe(500);
    expect(reads).toEqual({ tokens: 1, rules: 1, stamps: 1 });
    expect(logger.records.map(({ fields }) => fields['reason'])).toEqual(['rules unavailable']);
  });
});
