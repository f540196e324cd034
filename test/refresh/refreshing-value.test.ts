import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { createRefreshingValue, type Backoff, type RefreshingValueOptions } from '../../lib/refresh/index.ts';

const BACKOFF: Backoff = { initialMs: 1_000, maxMs: 30_000 };
const REFRESH_MS = 30_000;
// Short, so a test that reaches a deadline ends quickly; nothing is asserted about how long it took.
const DEADLINE_MS = 20;

interface Pending {
  readonly previous: string | undefined;
  resolve(value: string): void;
  reject(error: unknown): void;
}

/** Lets the callbacks of a promise answered a moment ago run. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A dependency whose every read waits until the test answers it. */
function dependency() {
  const reads: Pending[] = [];
  return {
    reads,
    read: (previous: string | undefined) =>
      new Promise<string>((resolve, reject) => {
        reads.push({ previous, resolve, reject });
      }),
    last: (): Pending => {
      const read = reads.at(-1);
      if (read === undefined) throw new Error('no read was made');
      return read;
    },
  };
}

/** A refreshing value over a dependency the test answers, on a clock the test moves. */
function harness(options: Partial<RefreshingValueOptions<string>> = {}) {
  const source = dependency();
  const clock = { now: 1_000_000 };
  const failures: { failure: unknown; kept: boolean }[] = [];
  const value = createRefreshingValue<string>({
    read: source.read,
    refreshMs: REFRESH_MS,
    backoff: BACKOFF,
    clock: () => clock.now,
    onFailure: (failure, kept) => failures.push({ failure, kept }),
    ...options,
  });
  return { value, source, clock, failures };
}

/** A harness that has served "good" once. */
async function warmHarness(options: Partial<RefreshingValueOptions<string>> = {}) {
  const warm = harness(options);
  const first = warm.value.get();
  warm.source.last().resolve('good');
  await first;
  return warm;
}

describe('createRefreshingValue', () => {
  it('shares one read among concurrent gets', async () => {
    const { value, source } = harness();

    const gets = [value.get(), value.get(), value.get()];
    source.last().resolve('first');

    expect((await Promise.all(gets)).map((served) => served.value)).toEqual(['first', 'first', 'first']);
    expect(source.reads).toHaveLength(1);
  });

  it('serves the value without reading until refreshMs have passed, then reads with the last good value', async () => {
    const { value, source, clock } = await warmHarness();
    clock.now += REFRESH_MS - 1;
    await value.get();
    expect(source.reads).toHaveLength(1);

    clock.now += 1;
    const refreshed = value.get();
    source.last().resolve('newer');

    expect((await refreshed).value).toBe('newer');
    expect(source.last().previous).toBe('good');
  });

  it('serves the last good value with the failure when a read fails, and reports it as kept', async () => {
    const { value, source, clock, failures } = await warmHarness();
    clock.now += REFRESH_MS;

    const served = value.get();
    source.last().reject(new Error('store down'));

    await expect(served).resolves.toMatchObject({ value: 'good', failure: new Error('store down') });
    expect(failures).toEqual([{ failure: new Error('store down'), kept: true }]);
  });

  it('rejects with the failure while no read has succeeded, and reads again only once the backoff has passed', async () => {
    const { value, source, clock, failures } = harness();
    const first = value.get();
    source.last().reject(new Error('secret unreadable'));
    await expect(first).rejects.toThrow('secret unreadable');

    clock.now += BACKOFF.initialMs / 2 - 1;
    await expect(value.get()).rejects.toThrow('secret unreadable');
    expect(source.reads).toHaveLength(1);

    clock.now += BACKOFF.initialMs / 2 + 1;
    const retried = value.get();
    source.last().resolve('late but good');

    await expect(retried).resolves.toMatchObject({ value: 'late but good' });
    expect(failures).toEqual([{ failure: new Error('secret unreadable'), kept: false }]);
  });

  it('serves the last good value at the deadline while the read is still unanswered', async () => {
    const { value, source, clock, failures } = await warmHarness({
      deadlineMs: DEADLINE_MS,
      timeoutError: (ms) => new Error(`silent for ${ms} ms`),
    });
    clock.now += REFRESH_MS;

    const served = await value.get();

    expect(served).toMatchObject({ value: 'good', failure: new Error(`silent for ${DEADLINE_MS} ms`) });
    expect(source.reads).toHaveLength(2);
    expect(failures).toEqual([{ failure: new Error(`silent for ${DEADLINE_MS} ms`), kept: true }]);
  });

  it('rejects a cold get with the timeout at the deadline', async () => {
    const { value } = harness({ deadlineMs: DEADLINE_MS, timeoutError: (ms) => new Error(`silent for ${ms} ms`) });

    await expect(value.get()).rejects.toThrow(`silent for ${DEADLINE_MS} ms`);
  });

  it('does not wait again for a read already past its deadline', async () => {
    const { value, source, clock } = await warmHarness({ deadlineMs: DEADLINE_MS });
    clock.now += REFRESH_MS;
    await value.get();

    // The read is never answered: this get can only end because it does not wait for it.
    const served = await value.get();

    expect(served.value).toBe('good');
    expect(source.reads).toHaveLength(2);
  });

  it('keeps the answer of a read that ends after its deadline', async () => {
    const { value, source, clock } = await warmHarness({ deadlineMs: DEADLINE_MS });
    clock.now += REFRESH_MS;
    await value.get();

    source.last().resolve('slow but good');
    await settled();

    await expect(value.get()).resolves.toEqual({ value: 'slow but good', readAt: clock.now });
  });

  it('starts a new read once the backoff after a late read has passed, and ignores the late one', async () => {
    const { value, source, clock } = await warmHarness({ deadlineMs: DEADLINE_MS });
    clock.now += REFRESH_MS;
    await value.get();
    const late = source.last();

    clock.now += BACKOFF.initialMs;
    const retried = value.get();
    source.last().resolve('from the new read');
    await retried;
    late.resolve('from the late read');
    await settled();

    expect(source.reads).toHaveLength(3);
    await expect(value.get()).resolves.toMatchObject({ value: 'from the new read' });
  });

  it('reads early when dueAfterMs have passed since the last read began', async () => {
    const { value, source, clock } = await warmHarness();
    clock.now += 9_999;
    await value.get({ dueAfterMs: 10_000 });
    expect(source.reads).toHaveLength(1);

    clock.now += 1;
    const early = value.get({ dueAfterMs: 10_000 });
    source.last().resolve('rotated');

    expect((await early).value).toBe('rotated');
  });

  it('drops the value on invalidate, so the next get reads afresh, and keeps a value invalidated after its replacement', async () => {
    const { value, source } = await warmHarness();

    value.invalidate('not the current value');
    await value.get();
    expect(source.reads).toHaveLength(1);

    value.invalidate('good');
    const fresh = value.get();
    source.last().resolve('resolved again');

    expect((await fresh).value).toBe('resolved again');
  });

  it('counts reads, successes and failures', async () => {
    const { value, source, clock } = await warmHarness();
    clock.now += REFRESH_MS;
    const failing = value.get();
    source.last().reject(new Error('down'));
    await failing;

    expect(value.stats()).toEqual({ reads: 2, successes: 1, failures: 1, consecutiveFailures: 1 });
  });

  it.each([
    { option: 'refreshMs', options: { refreshMs: 0 } },
    { option: 'deadlineMs', options: { deadlineMs: -1 } },
    { option: 'backoff.initialMs', options: { backoff: { initialMs: Number.NaN, maxMs: 1 } } },
    { option: 'backoff.maxMs', options: { backoff: { initialMs: 2_000, maxMs: 1_000 } } },
  ])('rejects a non-positive or inconsistent $option', ({ option, options }) => {
    expect(() => harness(options)).toThrow(ConfigurationError);
    expect(() => harness(options)).toThrow(option);
  });
});

describe('the backoff of a dependency that always fails', () => {
  /** The upper end of the wait after the n-th consecutive failure. */
  const cap = (backoff: Backoff, failures: number): number =>
    Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1));

  it('reads no sooner than half the cap after each failure, and at the latest at the cap, whatever the draws', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2_000 }),
        fc.integer({ min: 1, max: 64 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 80 }),
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 10 }),
        async (initialMs, multiple, gaps, draws) => {
          const backoff = { initialMs, maxMs: initialMs * multiple };
          let now = 0;
          let draw = 0;
          const readTimes: number[] = [];
          const value = createRefreshingValue<string>({
            read: () => {
              readTimes.push(now);
              return Promise.reject(new Error('down'));
            },
            refreshMs: REFRESH_MS,
            backoff,
            clock: () => now,
            random: () => draws[draw++ % draws.length]!,
          });
          for (const gap of gaps) {
            now += gap;
            const readsBefore = readTimes.length;
            await value.get().catch(() => undefined);
            const read = readTimes.length > readsBefore;
            if (readsBefore === 0) {
              expect(read).toBe(true);
              continue;
            }
            const sinceLast = now - readTimes[readsBefore - 1]!;
            const upper = cap(backoff, readsBefore);
            if (read) expect(sinceLast).toBeGreaterThanOrEqual(upper / 2);
            if (sinceLast >= upper) expect(read).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
