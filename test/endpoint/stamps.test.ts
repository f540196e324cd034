/** The handler with the stamp key: Pods it changes are stamped under it, and never admitted while it cannot be read. */
import { describe, expect, it } from 'vitest';
import { createAdmissionHandler, type AdmissionRules } from '../../lib/endpoint/index.ts';
import { STAMP_ANNOTATION, type Pod } from '../../lib/engine/index.ts';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { keyedStamps, type StampSource } from '../../lib/stamp/index.ts';
import { admissionReview, pod, rule, rules } from '../support/builders.ts';
import { decodePatch, parseAnswer } from '../support/reviews.ts';
import { TOKEN, admissionEvent, patchedObject, recordingLogger, recordingMetrics } from './support.ts';

const KEY = 'StampKeyOfTheEndpointTest0123456789abcdefghijklmnopqrstuvwxyzAB';
const RULES: AdmissionRules = rules(rule('add-pool', { mutationAdd: { nodeSelector: { pool: 'merged' } } }));

function handlerWith(stamps: StampSource) {
  const logger = recordingLogger();
  const handler = createAdmissionHandler({
    rules: {
      get: () =>
        Promise.resolve({
          value: RULES,
          version: 1,
          contentHash: 'sha256:0',
          syncedAt: '2026-12-01T10:00:00.000Z',
          ageSeconds: 0,
          stale: false,
        }),
    },
    acceptedTokens: () => Promise.resolve([TOKEN]),
    logger,
    metrics: recordingMetrics(),
    stamps,
  });
  return { handler, logger };
}

describe('the admission handler with a stamp key', () => {
  it('stamps the Pod it changes under the key, and changes nothing when the stamped Pod is reviewed again', async () => {
    const { handler, logger } = handlerWith(() => Promise.resolve(keyedStamps(KEY)));
    const review = admissionReview(pod());

    const first = await handler(admissionEvent({ body: JSON.stringify(review) }));
    const stamped = patchedObject(review as { request: { object: Pod } }, parseAnswer(first.body!).response.patch);
    const stamp = JSON.parse(stamped.metadata!.annotations![STAMP_ANNOTATION]!) as { sum: string; mac: string };
    const second = await handler(
      admissionEvent({ body: JSON.stringify(admissionReview(stamped, { uid: 'another-request' })) }),
    );

    expect(keyedStamps(KEY).key!.verify(stamp.sum, stamp.mac)).toBe(true);
    expect(parseAnswer(second.body!).response.patch).toBeUndefined();
    expect(logger.records.at(-1)?.fields).toMatchObject({
      decision: 'unchanged',
      rules: ['add-pool'],
      stamp: 'checked',
    });
  });

  it('answers 500 and logs why while the key cannot be read, and stamps once it can', async () => {
    let reads = 0;
    const { handler, logger } = handlerWith(() => {
      reads += 1;
      return reads === 1
        ? Promise.reject(new ConfigurationError('reading the stamp key from secret S failed: throttled'))
        : Promise.resolve(keyedStamps(KEY));
    });
    const body = JSON.stringify(admissionReview(pod()));

    const failed = await handler(admissionEvent({ body }));
    const answered = await handler(admissionEvent({ body }));

    expect(failed.statusCode).toBe(500);
    expect(logger.records[0]).toMatchObject({
      level: 'error',
      fields: {
        reason: 'stamp key unavailable',
        errorMessage: 'reading the stamp key from secret S failed: throttled',
      },
    });
    expect(decodePatch(parseAnswer(answered.body!).response.patch).map((operation) => operation.path)).toContain(
      '/metadata/annotations',
    );
  });
});
