import { describe, expect, it } from 'vitest';
import { describeIssues, ruleWarnings, validatePodMutation } from '../../lib/api/index.ts';
import { invalidSpec, manualClock, syncSubject, useSyncWorld, validSpec } from './support.ts';

const world = useSyncWorld();

const T0 = '2026-12-01T10:00:00.000Z';
const T1 = '2026-12-01T10:00:30.000Z';
const VALID_MESSAGE = 'the rule passed validation and is published to admission';

function patchesSince(count: number) {
  return world.server.statusPatches.slice(count);
}

function acceptedOf(name: string): Record<string, unknown> | undefined {
  const status = world.server.get(name)?.['status'] as { conditions?: Record<string, unknown>[] } | undefined;
  return status?.conditions?.find((condition) => condition['type'] === 'Accepted');
}

describe('status write-back', () => {
  it('marks a new valid resource Accepted True with reason Valid and its generation', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    const before = world.server.statusPatches.length;
    const subject = syncSubject(world, { clock: manualClock(Date.parse(T0)) });

    const report = await subject.sync();

    expect(report.statusPatched).toBe(1);
    expect(patchesSince(before)).toEqual([
      expect.objectContaining({
        name: 'alpha-pool',
        contentType: 'application/merge-patch+json',
        body: {
          status: {
            conditions: [
              {
                type: 'Accepted',
                status: 'True',
                reason: 'Valid',
                message: VALID_MESSAGE,
                lastTransitionTime: T0,
                observedGeneration: 1,
              },
            ],
            observedGeneration: 1,
            lastSyncTime: T0,
            enforcement: 'enforce',
          },
        },
      }),
    ]);
  });

  it('marks an invalid resource Accepted False with reason Invalid and the validation message', async () => {
    const stored = world.server.put({ metadata: { name: 'broken' }, spec: invalidSpec() });
    const verdict = validatePodMutation(stored);
    const expectedMessage = verdict.valid ? '' : describeIssues(verdict.invalid).join('; ');
    const subject = syncSubject(world, { clock: manualClock(Date.parse(T0)) });

    await subject.sync();

    expect(expectedMessage).toContain('spec.priority: must be a 32-bit integer (got "high")');
    expect(acceptedOf('broken')).toEqual({
      type: 'Accepted',
      status: 'False',
      reason: 'Invalid',
      message: expectedMessage,
      lastTransitionTime: T0,
      observedGeneration: 1,
    });
  });

  it('does not patch a resource whose verdict and generation are unchanged', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    world.server.put({ metadata: { name: 'broken' }, spec: invalidSpec() });
    const subject = syncSubject(world);
    await subject.sync();
    const before = world.server.statusPatches.length;

    const report = await subject.sync();

    expect(report).toMatchObject({ statusPatched: 0, statusFailed: 0, statusSkipped: 0 });
    expect(patchesSince(before)).toEqual([]);
  });

  it('patches a resource whose spec changed, keeping lastTransitionTime while it stays valid', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('general') });
    const clock = manualClock(Date.parse(T0));
    const subject = syncSubject(world, { clock });
    await subject.sync();
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('spot') });
    clock.advance(30_000);

    const report = await subject.sync();

    expect(report.statusPatched).toBe(1);
    expect(world.server.get('alpha-pool')?.['status']).toEqual({
      conditions: [
        {
          type: 'Accepted',
          status: 'True',
          reason: 'Valid',
          message: VALID_MESSAGE,
          lastTransitionTime: T0,
          observedGeneration: 2,
        },
      ],
      observedGeneration: 2,
      lastSyncTime: T1,
      enforcement: 'enforce',
    });
  });

  it('moves lastTransitionTime when a valid resource becomes invalid', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    const clock = manualClock(Date.parse(T0));
    const subject = syncSubject(world, { clock });
    await subject.sync();
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: invalidSpec() });
    clock.advance(30_000);

    await subject.sync();

    expect(acceptedOf('alpha-pool')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      lastTransitionTime: T1,
      observedGeneration: 2,
    });
  });

  it('repeats the other conditions of a resource in the patch, since a merge patch replaces the array', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    const other = { type: 'Reviewed', status: 'True', reason: 'ByHand', message: 'checked', lastTransitionTime: T0 };
    await world.source().patchStatus('alpha-pool', { conditions: [other] });
    const subject = syncSubject(world, { clock: manualClock(Date.parse(T1)) });

    await subject.sync();

    const conditions = (world.server.get('alpha-pool')?.['status'] as { conditions: unknown[] }).conditions;
    expect(conditions).toEqual([other, expect.objectContaining({ type: 'Accepted', status: 'True' })]);
  });

  it('keeps the message well under the CRD limit of 32768 characters for a rule with many issues', async () => {
    const badKeys = Object.fromEntries(
      Array.from({ length: 60 }, (_, index) => [`bad key ${'x'.repeat(40)} ${index}!`, 'v']),
    );
    world.server.put({
      metadata: { name: 'many-issues' },
      spec: { ...validSpec(), mutationAdd: { nodeSelector: badKeys } },
    });
    const subject = syncSubject(world);

    await subject.sync();

    const message = String(acceptedOf('many-issues')?.['message']);
    expect(message.length).toBeLessThanOrEqual(8192);
    expect(message).toMatch(/\.\.\. \(truncated; \d+ issues in all\)$/);
  });

  it('publishes the snapshot before the first status patch is sent', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    world.server.fail({ kind: 'hang' }, { on: 'patch' });
    const subject = syncSubject(world);
    const requestsBefore = world.server.requests.length;

    const running = subject.sync();
    await expect
      .poll(() => world.server.requests.slice(requestsBefore).some((request) => request.method === 'PATCH'))
      .toBe(true);
    const snapshotDuringPatch = await world.store(subject.clusterId).read();
    const report = await running;

    expect(snapshotDuringPatch?.rules.map((rule) => rule.name)).toEqual(['alpha-pool']);
    expect(report).toMatchObject({ outcome: 'published', statusFailed: 1 });
  });

  it('still publishes when a status patch fails, and counts the failure', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    world.server.put({ metadata: { name: 'beta-pool' }, spec: validSpec() });
    world.server.fail({ kind: 'status', code: 500 }, { on: 'patch', times: 1 });
    const subject = syncSubject(world);

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', version: 1, statusPatched: 1, statusFailed: 1 });
    expect((await world.store(subject.clusterId).read())?.rules).toHaveLength(2);
    expect(subject.recorder.emitted).toContainEqual({ name: 'StatusWriteErrors', unit: 'Count', value: 1 });
    expect(subject.recorder.logs.find((entry) => entry.level === 'warn')?.fields).toMatchObject({
      statusFailed: 1,
      failures: [
        expect.objectContaining({
          errorReason: 'server',
          errorMessage: expect.stringMatching(/500 Internal Server Error/) as unknown,
        }),
      ],
    });
  });

  it('retries a failed status patch on the next sync', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    world.server.fail({ kind: 'status', code: 500 }, { on: 'patch', times: 1 });
    const subject = syncSubject(world);
    await subject.sync();

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'unchanged', statusPatched: 1, statusFailed: 0 });
    expect(acceptedOf('alpha-pool')).toMatchObject({ status: 'True' });
  });

  it('stops patching after a failure every patch would share, leaving the rest for the next sync', async () => {
    for (const name of ['rule-a', 'rule-b', 'rule-c', 'rule-d', 'rule-e'])
      world.server.put({ metadata: { name }, spec: validSpec() });
    world.server.fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { on: 'patch' });
    const subject = syncSubject(world, { statusConcurrency: 1 });

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', statusPatched: 0, statusFailed: 1, statusSkipped: 4 });
  });

  it('starts no status patch once the status budget is spent', async () => {
    for (const name of ['rule-a', 'rule-b', 'rule-c']) world.server.put({ metadata: { name }, spec: validSpec() });
    const clock = manualClock();
    const cluster = world.source();
    // Every patch takes a simulated second, twice the budget, so only the first one starts.
    const slowPatches = {
      readClusterUid: () => cluster.readClusterUid(),
      listPodMutations: () => cluster.listPodMutations(),
      listPodPlacements: () => cluster.listPodPlacements(),
      patchStatus: async (name: string, status: object) => {
        clock.advance(1_000);
        await cluster.patchStatus(name, status);
      },
    };
    const subject = syncSubject(world, { clock, source: slowPatches, statusConcurrency: 1, statusBudgetMs: 500 });

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', statusPatched: 1, statusFailed: 0, statusSkipped: 2 });
    expect(world.server.names().filter((name) => acceptedOf(name) !== undefined)).toEqual(['rule-a']);
  });

  it("writes a valid rule's warnings after its message, as validate gives them, and drops them once fixed", async () => {
    const stored = world.server.put({
      metadata: { name: 'by-kind' },
      spec: validSpec('general', { workloadSelector: { kinds: ['Deploymnet', 'StatefulSet'] } }),
    });
    const verdict = validatePodMutation(stored);
    const warnings = verdict.valid
      ? describeIssues({ name: 'by-kind', issues: ruleWarnings(verdict.rule, stored) })
      : [];
    const clock = manualClock(Date.parse(T0));
    const subject = syncSubject(world, { clock });

    await subject.sync();
    const warned = acceptedOf('by-kind');
    world.server.put({
      metadata: { name: 'by-kind' },
      spec: validSpec('general', { workloadSelector: { kinds: ['Deployment', 'StatefulSet'] } }),
    });
    clock.advance(30_000);
    await subject.sync();

    expect(warnings).toEqual([
      expect.stringContaining('spec.workloadSelector.kinds[0]: "Deploymnet" looks like a misspelling of Deployment'),
    ]);
    expect(warned).toMatchObject({
      status: 'True',
      reason: 'Valid',
      message: `${VALID_MESSAGE}; warning: ${warnings[0]!}`,
    });
    expect(acceptedOf('by-kind')).toMatchObject({
      status: 'True',
      reason: 'Valid',
      message: VALID_MESSAGE,
      lastTransitionTime: T0,
    });
  });
});
