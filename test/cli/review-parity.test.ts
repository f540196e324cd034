/**
 * `podmutation review` answers byte for byte what the webhook answers: the same AdmissionReview sent to the endpoint
 * handler (its rules published from the same rule file into a real table and read back through the admission cache,
 * stamps without a key, as the CLI has none) and to the CLI. The review's Pod and the rule carry tolerationSeconds
 * beyond 2^53, int64's maximum among them, whose digits both must keep.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createAdmissionHandler } from '../../lib/endpoint/index.ts';
import { loadRuleFiles } from '../../lib/rule-files/index.ts';
import { KEYLESS_STAMPS } from '../../lib/stamp/index.ts';
import {
  admissionEvent,
  recordingLogger,
  recordingMetrics,
  ruleCache,
  TOKEN,
  type AdmissionStores,
} from '../endpoint/support.ts';
import { freshClusterId, placementsOf, snapshotsOf } from '../store/support.ts';
import { runPodmutation } from '../support/cli.ts';
import { fixturePath, fixtureText } from '../support/fixtures.ts';
import { useTestTable } from '../support/dynamo.ts';

const RULES = fixturePath('rules/int64');
const REVIEW = 'reviews/int64-tolerations.json';

const table = useTestTable();
let stores: AdmissionStores;

beforeAll(() => {
  stores = {
    snapshots: snapshotsOf({ client: table.client, tableName: table.tableName }),
    placements: placementsOf({ client: table.client, tableName: table.tableName }),
  };
});

/** The webhook's answer: the rule files published as a snapshot, read back by the admission cache, the review POSTed. */
async function webhookAnswer(body: string, rules = RULES): Promise<string> {
  const clusterId = freshClusterId();
  const loaded = await loadRuleFiles([rules]);
  expect(loaded.invalid).toEqual([]);
  await snapshotsOf({ client: table.client, tableName: table.tableName })(clusterId).publish({
    rules: loaded.rules,
    invalid: [],
    resourceVersion: '',
    syncedAt: '2026-12-01T10:00:00.000Z',
  });
  const handler = createAdmissionHandler({
    rules: ruleCache(stores, clusterId),
    acceptedTokens: () => Promise.resolve([TOKEN]),
    logger: recordingLogger(),
    metrics: recordingMetrics(),
    stamps: () => Promise.resolve(KEYLESS_STAMPS),
  });
  const answer = await handler(admissionEvent({ body }));
  expect(answer.statusCode).toBe(200);
  return answer.body ?? '';
}

/** The text of an answer's patch: a JSON.parse of it would round the digits these tests are about. */
function patchText(answer: string): string {
  const encoded = /"patch":"([^"]+)"/.exec(answer)?.[1] ?? '';
  return Buffer.from(encoded, 'base64').toString('utf8');
}

describe('podmutation review and the webhook on the same AdmissionReview', () => {
  it("keep the digits of the Pod's own tolerationSeconds when a rule with small integers rewrites its tolerations", async () => {
    const rules = join(await mkdtemp(join(tmpdir(), 'podmutation-rules-')), 'short-drain.yaml');
    await writeFile(
      rules,
      stringify({
        apiVersion: 'agent.cloudpilot.ai/v1alpha1',
        kind: 'PodMutation',
        metadata: { name: 'short-drain' },
        spec: {
          enable: true,
          workloadSelector: { namespaces: ['production'] },
          mutationAdd: {
            tolerations: [
              { key: 'example.com/drain', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
            ],
          },
        },
      }),
    );

    const [webhook, cli] = await Promise.all([
      webhookAnswer(fixtureText(REVIEW), rules),
      runPodmutation(['review', '--rules', rules, fixturePath(REVIEW)]),
    ]);

    expect(cli).toEqual({ code: 0, stdout: `${webhook}\n`, stderr: '' });
    expect(patchText(webhook)).toContain('"tolerationSeconds":9223372036854775806');
  });

  it('answer the same bytes, with every digit of tolerationSeconds beyond 2^53', async () => {
    const body = fixtureText(REVIEW);

    const [webhook, cli] = await Promise.all([
      webhookAnswer(body),
      runPodmutation(['review', '--rules', RULES, fixturePath(REVIEW)]),
    ]);

    expect(cli).toEqual({ code: 0, stdout: `${webhook}\n`, stderr: '' });
    const patch = patchText(webhook);
    expect(patch).toContain('"tolerationSeconds":9223372036854775806');
    expect(patch).toContain('"tolerationSeconds":9223372036854775807');
  });

  it('answer the same bytes for the review given as YAML, which the CLI reads with the same digits', async () => {
    // The review in YAML's block style, its integer written with every digit (through a placeholder, as a double cannot).
    const digits = '9223372036854775806';
    const placeholder = JSON.parse(fixtureText(REVIEW).replace(digits, '"digits"')) as unknown;
    const yaml = stringify(placeholder).replace('tolerationSeconds: digits', `tolerationSeconds: ${digits}`);
    expect(yaml).toContain(`tolerationSeconds: ${digits}`);

    const [webhook, cli] = await Promise.all([
      webhookAnswer(fixtureText(REVIEW)),
      runPodmutation(['review', '--rules', RULES, '-'], yaml),
    ]);

    expect(cli).toEqual({ code: 0, stdout: `${webhook}\n`, stderr: '' });
  });
});
