/**
 * explain takes inputs as users have them: an AdmissionReview, a workload manifest and a
 * `helm template` stream give the same answer as the Pod they stand for.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { podFromWorkload, readWorkloadObject } from '../../lib/workloads/index.ts';
import { runPodmutationInProcess } from '../support/cli.ts';
import { EXAMPLES, fixtureText } from '../support/fixtures.ts';
import { parseReview } from '../support/reviews.ts';

const REVIEW_TEXT = fixtureText('reviews/deployment-legacy-pool.json');
const REVIEW = parseReview(REVIEW_TEXT);
const POD = REVIEW.request.object;

/** The Deployment whose controller creates the review's Pod: the same labels and spec as its template. */
const DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'checkout', namespace: 'production' },
  spec: {
    selector: { matchLabels: { 'app.kubernetes.io/name': 'checkout' } },
    template: {
      metadata: { labels: { 'app.kubernetes.io/name': 'checkout', 'app.kubernetes.io/component': 'backend' } },
      spec: POD.spec,
    },
  },
};

let folder: string;

async function file(name: string, text: string): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, text);
  return path;
}

const explain = (path: string) => runPodmutationInProcess(['explain', '--rules', EXAMPLES, path]);

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'podmutation-explain-'));
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('explain of inputs as users have them', () => {
  it('answers for an AdmissionReview as for its request.object in the request namespace', async () => {
    const podFile = await file(
      'pod.json',
      JSON.stringify({ ...POD, metadata: { ...POD.metadata, namespace: REVIEW.request.namespace } }),
    );

    const fromReview = await explain(await file('review.json', REVIEW_TEXT));
    const fromPod = await explain(podFile);

    expect(fromReview.code).toBe(0);
    expect(fromReview.stdout).toContain('migrate-legacy-pool');
    expect(fromReview.stdout).toBe(fromPod.stdout);
  });

  it('answers for a Deployment manifest as for the Pod its controller creates', async () => {
    const controllerPod = podFromWorkload(readWorkloadObject(DEPLOYMENT, 'deployment'), { namespace: 'production' });

    const fromDeployment = await explain(await file('deployment.yaml', stringify(DEPLOYMENT)));
    const fromPod = await explain(await file('controller-pod.json', JSON.stringify(controllerPod)));

    expect(fromDeployment.code).toBe(0);
    expect(fromDeployment.stdout).toContain('(workload Deployment checkout)');
    expect(fromDeployment.stdout).toContain('    migrate-legacy-pool\n');
    expect(fromDeployment.stdout).toBe(fromPod.stdout);
  });

  it('takes the namespace of a manifest without one from --namespace', async () => {
    const manifest = await file('no-namespace.yaml', stringify({ ...DEPLOYMENT, metadata: { name: 'checkout' } }));

    const run = await runPodmutationInProcess(['explain', '--rules', EXAMPLES, '--namespace', 'production', manifest]);

    expect(run.stdout).toContain('Pod production/');
    expect(run.stdout).toContain('    migrate-legacy-pool\n');
  });

  it('explains every workload of a helm template stream and skips the documents that create no Pod', async () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'checkout', namespace: 'production' },
      spec: { ports: [{ port: 80 }] },
    };
    const stream = [service, DEPLOYMENT].map((document) => stringify(document)).join('---\n');

    const run = await explain(await file('chart.yaml', stream));

    expect(run.code).toBe(0);
    expect(run.stderr).toContain('document 1 (kind "Service") creates no Pod; skipped');
    expect(run.stdout).toContain('(workload Deployment checkout)');
  });
});

describe('review --wrap', () => {
  it('answers a Deployment manifest as the webhook answers the CREATE of the Pod its controller creates', async () => {
    const controllerPod = podFromWorkload(readWorkloadObject(DEPLOYMENT, 'deployment'), { namespace: 'production' });
    const review = {
      ...REVIEW,
      request: { ...REVIEW.request, uid: 'podmutation-review-1', namespace: 'production', object: controllerPod },
    };

    const wrapped = await runPodmutationInProcess([
      'review',
      '--rules',
      EXAMPLES,
      '--wrap',
      await file('wrap-deployment.yaml', stringify(DEPLOYMENT)),
    ]);
    const direct = await runPodmutationInProcess([
      'review',
      '--rules',
      EXAMPLES,
      await file('wrap-review.json', JSON.stringify(review)),
    ]);

    expect(wrapped.code).toBe(0);
    expect(JSON.parse(wrapped.stdout)).toEqual(JSON.parse(direct.stdout));
    expect((JSON.parse(wrapped.stdout) as { response: { patch?: string } }).response.patch).toBeDefined();
  });

  it('answers each Pod of a stream on its own line, and skips what creates no Pod', async () => {
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'checkout' } };
    const stream = [DEPLOYMENT, service, POD].map((document) => stringify(document)).join('---\n');

    const run = await runPodmutationInProcess([
      'review',
      '--rules',
      EXAMPLES,
      '--wrap',
      '--namespace',
      'production',
      await file('wrap-stream.yaml', stream),
    ]);

    const answers = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { response: { uid: string } });
    expect(answers.map((answer) => answer.response.uid)).toEqual(['podmutation-review-1', 'podmutation-review-2']);
    expect(run.stderr).toContain('document 2 (kind "Service") creates no Pod; skipped');
  });

  it('refuses --namespace without --wrap, since a review names its own namespace', async () => {
    const run = await runPodmutationInProcess([
      'review',
      '--rules',
      EXAMPLES,
      '--namespace',
      'production',
      await file('plain.json', REVIEW_TEXT),
    ]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--namespace goes with --wrap');
  });
});
