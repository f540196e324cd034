/**
 * The handler with the stamp key: Pods it changes are stamped under it, and never admitted while it cannot be read;
 * the key set read from its secret (the loopback Secrets Manager) through a rotation by docs/operations.md's steps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmissionHandler } from '../../lib/endpoint/index.ts';
import { STAMP_ANNOTATION, type Pod } from '../../lib/engine/index.ts';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { createStampSource, generateStampKey, keyedStamps, type StampSource } from '../../lib/stamp/index.ts';
import { admissionReview, pod, rule, rules } from '../support/builders.ts';
import { decodePatch, parseAnswer } from '../support/reviews.ts';
import {
  TOKEN,
  admissionEvent,
  patchedObject,
  recordingLogger,
  recordingMetrics,
  startFakeSecretsManager,
} from './support.ts';
import { type AdmissionRules } from '../../lib/endpoint/admission-rules.ts';

const KEY = 'StampKeyOfTheEndpointTest0123456789abcdefghijklmnopqrstuvwxyzAB';
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:StampKeySecret-AbCdEf';
const MINUTE = 60_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
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

/** The stamp key's secret in the loopback Secrets Manager, and a clock the containers' refreshes run on. */
async function stampKeySecret(key: string) {
  const fake = await startFakeSecretsManager(new Map([[SECRET_ARN, key]]));
  cleanups.push(fake.close);
  const clock = { now: 0 };
  /** A container's stamp source: its own reads, re-read every 5 minutes from its first. */
  const container = (options: Parameters<typeof createStampSource>[1] = {}) =>
    createStampSource(
      { kind: 'secret', secretArn: SECRET_ARN, refreshSeconds: 300 },
      { secrets: fake.client(), clock: () => clock.now, ...options },
    );
  return { fake, clock, container };
}

/** The Pod `from` stamps, reviewed again by `by`: the second answer's patch (none when the stamp checked) and log. */
async function restampedBy(from: ReturnType<typeof handlerWith>, by: ReturnType<typeof handlerWith>) {
  const review = admissionReview(pod());
  const first = await from.handler(admissionEvent({ body: JSON.stringify(review) }));
  expect(first.statusCode).toBe(200);
  const stamped = patchedObject(review as { request: { object: Pod } }, parseAnswer(first.body!).response.patch);
  const again = await by.handler(
    admissionEvent({ body: JSON.stringify(admissionReview(stamped, { uid: 'another-request' })) }),
  );
  return { patch: parseAnswer(again.body!).response.patch, stamp: by.logger.records.at(-1)?.fields['stamp'] };
}

describe('the stamp key set read from its secret', () => {
  it('accepts, in every container at every step of a rotation, the stamps every other container writes', async () => {
    const [OLD, NEW] = [generateStampKey(), generateStampKey()];
    const { fake, clock, container } = await stampKeySecret(OLD);
    // Two warm containers whose refreshes fall at different times: one read at 0, the other at 2 minutes.
    const early = handlerWith(container());
    const late = handlerWith(container());
    await early.handler(admissionEvent({ body: JSON.stringify(admissionReview(pod())) }));
    clock.now = 2 * MINUTE;
    await late.handler(admissionEvent({ body: JSON.stringify(admissionReview(pod())) }));
    const containers = [early, late];
    const everyPair = async (step: string) => {
      for (const from of containers)
        for (const by of containers)
          if (from !== by) expect(await restampedBy(from, by), step).toEqual({ patch: undefined, stamp: 'checked' });
    };

    await everyPair('before the rotation');
    fake.stagePending(SECRET_ARN, NEW); // step 1: the new key, verify-only
    for (const minute of [3, 6, 8]) {
      clock.now = minute * MINUTE;
      await everyPair(`${minute} minutes in, the new key staged`);
    }
    fake.promotePending(SECRET_ARN); // step 2: the new key signs, the old one becomes AWSPREVIOUS
    // A container started now reads the new key as current at once.
    containers.push(handlerWith(container()));
    for (const minute of [9, 11, 13]) {
      clock.now = minute * MINUTE;
      await everyPair(`${minute} minutes in, the new key current`);
    }
  });

  it('signs under AWSCURRENT and checks AWSPREVIOUS until a refresh reads it gone, then refuses it', async () => {
    const [OLD, NEW] = [generateStampKey(), generateStampKey()];
    const { fake, clock, container } = await stampKeySecret(OLD);
    fake.rotate(SECRET_ARN, NEW);
    const stamps = container();
    const byOld = keyedStamps(OLD).key!.sign('sum');

    const during = await stamps();
    fake.removePrevious(SECRET_ARN);
    clock.now = 4 * MINUTE;
    const beforeRefresh = await stamps();
    clock.now = 5 * MINUTE;
    const after = await stamps();

    expect(during.key!.sign('sum')).toBe(keyedStamps(NEW).key!.sign('sum'));
    expect(during.key!.verify('sum', byOld)).toBe(true);
    expect(beforeRefresh.key!.verify('sum', byOld)).toBe(true);
    expect(after.key!.verify('sum', byOld)).toBe(false);
    expect(after.key!.verify('sum', keyedStamps(NEW).key!.sign('sum'))).toBe(true);
  });

  it('keeps the last key set when a refresh fails, and says so through onRefreshFailure', async () => {
    const { fake, clock, container } = await stampKeySecret(KEY);
    const failures: ConfigurationError[] = [];
    const stamps = container({ onRefreshFailure: (error) => failures.push(error) });
    const before = await stamps();

    fake.fail(true);
    clock.now = 5 * MINUTE;
    const during = await stamps();

    expect(during).toBe(before);
    expect(failures.map((error) => error.message)).toEqual([
      expect.stringContaining(`reading the stamp key from secret ${SECRET_ARN} (AWSCURRENT) failed`),
    ]);
  });

  it('leaves out a malformed AWSPREVIOUS, naming the stage, and signs under AWSCURRENT', async () => {
    const { fake, container } = await stampKeySecret(KEY);
    fake.rotate(SECRET_ARN, 'too-short');
    fake.rotate(SECRET_ARN, generateStampKey()); // the fix of a bad put-secret-value: the bad value is AWSPREVIOUS
    const ignored: ConfigurationError[] = [];

    const stamps = await container({ onIgnoredVersion: (error) => ignored.push(error) })();

    expect(stamps.key).toBeDefined();
    expect(ignored.map((error) => [error.context['versionStage'], error.message])).toEqual([
      ['AWSPREVIOUS', expect.stringContaining('holds a stamp key of 9 characters that is not of the form')],
    ]);
    expect(ignored[0]!.message).not.toContain('too-short');
  });
});
