/**
 * Kyverno's admission controller for kyverno.test.ts (the comparison with our webhook's peers in docs/compared.md), built from the Go
 * module in ./kyverno (go.mod pins github.com/kyverno/kyverno) into the gitignored cache, keyed by a digest of that
 * module's sources, with the CRDs it will not start without (the same module's config/crds) copied beside it; only the
 * first run compiles, and runs it out of cluster as the module's DEVELOPMENT.md ("Debugging local code") describes.
 * Measured on the 2-core build machine: the first build took 10 minutes (619 s while the control plane's build shared
 * the cores, 450 CPU-seconds; 72 s more to download the modules), a cached start a few milliseconds; a start against a
 * plane, CRDs included, until its first policy is enforced, about 14 s.
 */
import { existsSync } from 'node:fs';
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { cachedBuild, runGo, sourceDigest } from './go-build.ts';
import type { ClusterPod } from './pods.ts';
import { freePort, startSupervised, waitFor } from './processes.ts';
import { webhookCalls } from './webhook.ts';

/** The controller's main package, and the module whose CRDs are applied with it. */
const MODULE = 'github.com/kyverno/kyverno';
const MAIN = `${MODULE}/cmd/kyverno`;

/** The built admission controller and the CRDs of the same release. */
interface Kyverno {
  /** The kyverno version of go.mod, such as v1.19.1. */
  readonly release: string;
  readonly controller: string;
  /** The CRD manifests the controller's informers need (see CRDS). */
  readonly crds: readonly string[];
  /** Seconds the build took, or undefined when the cache already held it. */
  readonly builtSeconds: number | undefined;
}

const MODULE_DIR = fileURLToPath(new URL('./kyverno', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE_ROOT = join(ROOT, '.cache', 'kyverno');
const SOURCES = ['go.mod', 'go.sum', 'tools.go'];

// The CRDs of config/crds whose resources the admission controller watches (its informers and its controller-runtime
// manager; read from the API server's apiserver_longrunning_requests while it ran): it waits for every informer to
// sync, and an informer of a resource the API server does not serve never does. The cleanup and deleting policies are
// the cleanup controller's.
const CRDS: readonly string[] = [
  'kyverno/kyverno.io_clusterpolicies.yaml',
  'kyverno/kyverno.io_globalcontextentries.yaml',
  'kyverno/kyverno.io_policies.yaml',
  'kyverno/kyverno.io_policyexceptions.yaml',
  'kyverno/kyverno.io_updaterequests.yaml',
  'policies.kyverno.io/policies.kyverno.io_generatingpolicies.yaml',
  'policies.kyverno.io/policies.kyverno.io_imagevalidatingpolicies.yaml',
  'policies.kyverno.io/policies.kyverno.io_mutatingpolicies.yaml',
  'policies.kyverno.io/policies.kyverno.io_namespacedgeneratingpolicies.yaml',
  'policies.kyverno.io/policies.kyverno.io_namespacedimagevalidatingpolicies.yaml',
  'policies.kyverno.io/policies.kyverno.io_namespacedmutatingpolicies.yaml',
  'policies.kyverno.io/policies.kyverno.io_namespacedvalidatingpolicies.yaml',
  'policies.kyverno.io/policies.kyverno.io_policyexceptions.yaml',
  'policies.kyverno.io/policies.kyverno.io_validatingpolicies.yaml',
];

async function kyvernoRelease(): Promise<string> {
  const goMod = await readFile(join(MODULE_DIR, 'go.mod'), 'utf8');
  const release = /^require github\.com\/kyverno\/kyverno (v\d+\.\d+\.\d+)\s*$/m.exec(goMod)?.[1];
  if (release === undefined) throw new Error(`${join(MODULE_DIR, 'go.mod')} requires no ${MODULE} release`);
  return release;
}

function buildArguments(outDir: string): string[] {
  return ['build', '-trimpath', '-buildvcs=false', '-ldflags=-s -w', '-o', `${outDir}/`, MAIN];
}

/** Builds the controller into `scratch` and copies the CRDs it needs from the module go.mod pins beside it. */
async function buildInto(scratch: string): Promise<void> {
  await runGo(MODULE_DIR, buildArguments(scratch));
  const moduleDir = (await runGo(MODULE_DIR, ['list', '-m', '-f', '{{.Dir}}', MODULE])).trim();
  for (const crd of CRDS) await copyFile(join(moduleDir, 'config', 'crds', crd), join(scratch, crd.replace('/', '_')));
}

/**
 * The controller and CRDs of the release go.mod pins: from the cache when a build of the same sources is there,
 * otherwise built first.
 */
async function kyverno(log: (line: string) => void = () => undefined): Promise<Kyverno> {
  const release = await kyvernoRelease();
  const digest = await sourceDigest(MODULE_DIR, SOURCES, [...buildArguments(''), ...CRDS]);
  const dir = join(CACHE_ROOT, `kyverno-${release}-${digest}`);
  const builtSeconds = await cachedBuild(
    {
      dir,
      release,
      built: () => existsSync(join(dir, 'build.json')),
      build: buildInto,
      what: `the Kyverno admission controller ${release}`,
      takes: 'about 10 minutes',
    },
    log,
  );
  return {
    release,
    controller: join(dir, 'kyverno'),
    crds: (await readdir(dir))
      .filter((file) => file.endsWith('.yaml'))
      .sort()
      .map((file) => join(dir, file)),
    builtSeconds,
  };
}

/** The namespace Kyverno keeps its certificates, leases and configuration in (KYVERNO_NAMESPACE). */
const NAMESPACE = 'kyverno';
// The secrets its certificate renewer writes the self-signed CA and serving pair to (DEVELOPMENT.md's names).
const CA_SECRET = 'kyverno-svc.kyverno.svc.kyverno-tls-ca';
const TLS_SECRET = 'kyverno-svc.kyverno.svc.kyverno-tls-pair';
/** The label Kyverno puts on every webhook configuration it registers. */
const MANAGED_BY = 'webhook.kyverno.io/managed-by=kyverno';
/** The configuration of Kyverno's resource webhooks, and of its webhooks for its own policies. */
const RESOURCE_MUTATING_CONFIGURATION = 'kyverno-resource-mutating-webhook-cfg';
const POLICY_MUTATING_CONFIGURATION = 'kyverno-policy-mutating-webhook-cfg';
/**
 * The webhooks of RESOURCE_MUTATING_CONFIGURATION that mutate resources, by the failure policy of the policies they
 * serve (pkg/config/config.go MutatingWebhookName, pkg/controllers/webhook/utils.go webhookNameAndPath): the names the
 * API server's admission metrics use.
 */
const RESOURCE_MUTATING_WEBHOOKS = ['mutate.kyverno.svc-fail', 'mutate.kyverno.svc-ignore'] as const;
/** The webhook of POLICY_MUTATING_CONFIGURATION, which Kyverno registers for its own ClusterPolicies and Policies. */
const POLICY_MUTATING_WEBHOOK = 'mutate-policy.kyverno.svc';
/** A ClusterPolicy sent with dryRun to see the policy webhook answer: it validates one label of Pods. */
const PROBE_POLICY = {
  apiVersion: 'kyverno.io/v1',
  kind: 'ClusterPolicy',
  metadata: { name: 'start-probe' },
  spec: {
    rules: [
      {
        name: 'probe',
        match: { any: [{ resources: { kinds: ['Pod'] } }] },
        validate: { failureAction: 'Audit', pattern: { metadata: { labels: { probe: '?*' } } } },
      },
    ],
  },
};

/** A running Kyverno admission controller. */
interface RunningKyverno {
  /** The names of its resource mutating webhooks as the API server's metrics label them. */
  readonly webhookNames: readonly string[];
  readonly logFile: string;
  /** The controller's process id. */
  readonly pid: number | undefined;
  /** The kyverno version it was built from. */
  readonly release: string;
  /** Stops the controller and deletes the webhook configurations it registered, so that nothing is sent to it. */
  stop(): Promise<void>;
}

type Established = { status?: { conditions?: { type: string; status: string }[] } };

const hasCondition = (object: Established, type: string): boolean =>
  (object.status?.conditions ?? []).some((condition) => condition.type === type && condition.status === 'True');

/** Creates the CRDs in one kubectl run (too large for `kubectl apply`'s last-applied annotation), then waits until each is Established. */
async function createCrds(plane: ControlPlane, crds: readonly string[]): Promise<void> {
  const created = await plane.kubectl(['create', ...crds.flatMap((crd) => ['-f', crd]), '-o', 'name']);
  if (created.code !== 0) throw new Error(`kubectl create of Kyverno's CRDs: ${created.stderr}`);
  const names = created.stdout.trim().split('\n');
  await waitFor(`Kyverno's ${names.length} CRDs to be Established`, async () => {
    const list = await plane.admin.json<{ items: (Established & { metadata: { name: string } })[] }>(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    );
    const established = list.items.filter((crd) => hasCondition(crd, 'Established')).map((crd) => crd.metadata.name);
    return names.every((name) => established.includes(name.slice(name.indexOf('/') + 1))) ? true : undefined;
  });
}

/**
 * Starts Kyverno's admission controller out of cluster against the plane, as its DEVELOPMENT.md runs it locally: the
 * plane's admin kubeconfig, --serverIP (the address the webhook configurations name, and its serving certificate's IP)
 * and the webhook server on the same loopback port; resolves once it has registered its webhook configurations and
 * the API server calls it for its own ClusterPolicies. Kyverno registers a webhook for Pods only for a policy that
 * mutates them: applyClusterPolicy waits for that.
 */
async function startKyverno(plane: ControlPlane, build: Kyverno): Promise<RunningKyverno> {
  await createCrds(plane, build.crds);
  await plane.ensureNamespace(NAMESPACE);
  const [port, metricsPort] = await Promise.all([freePort(), freePort()]);
  const logFile = join(plane.dir, 'kyverno.log');
  const controller = startSupervised(
    'kyverno',
    build.controller,
    [
      `--kubeconfig=${plane.adminKubeconfig}`,
      `--serverIP=127.0.0.1:${port}`,
      '--webhookServerHost=127.0.0.1',
      `--webhookServerPort=${port}`,
      `--caSecretName=${CA_SECRET}`,
      `--tlsSecretName=${TLS_SECRET}`,
      '--backgroundServiceAccountName=system:serviceaccount:kyverno:kyverno-background-controller',
      // Off, as the comparison needs none of them: admission reports (and their ephemeral report resources), the
      // events of each policy result, the controller-runtime metrics server (:8080 by default, taken by parallel files).
      '--admissionReports=false',
      '--omitEvents=PolicyApplied,PolicyViolation,PolicyError,PolicySkipped',
      '--controllerRuntimeMetricsAddress=0',
      // Its Prometheus metrics on a free loopback port rather than every interface's 8000.
      '--metricsHost=127.0.0.1',
      `--metricsPort=${metricsPort}`,
      // Policy exceptions stay off (--enablePolicyException defaults to false); background scans, cleanup and reports
      // are other binaries (background-controller, cleanup-controller, reports-controller), not started.
      '--loggingFormat=json',
    ],
    {
      logFile,
      env: {
        ...process.env,
        KYVERNO_NAMESPACE: NAMESPACE,
        KYVERNO_SERVICEACCOUNT_NAME: 'kyverno-admission-controller',
        // No Deployment or Pod of its own out of cluster: its launch.json's placeholders.
        KYVERNO_DEPLOYMENT: 'dummy',
        KYVERNO_POD_NAME: 'dummy',
        INIT_CONFIG: 'kyverno',
        METRICS_CONFIG: 'kyverno-metrics',
      },
    },
  );
  const failFast = () =>
    controller.exited() === undefined ? undefined : `kyverno exited (${controller.exited()}):\n${controller.logTail()}`;
  const stop = async (): Promise<void> => {
    await controller.stop();
    for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'])
      await plane.admin.request('DELETE', `/apis/admissionregistration.k8s.io/v1/${kind}`, {
        query: { labelSelector: MANAGED_BY },
      });
  };
  try {
    await waitFor(
      'Kyverno to register its mutating webhook configurations',
      async () => {
        for (const name of [RESOURCE_MUTATING_CONFIGURATION, POLICY_MUTATING_CONFIGURATION]) {
          const answer = await plane.admin.request(
            'GET',
            `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${name}`,
          );
          if (answer.status !== 200) return undefined;
        }
        return true;
      },
      { failFast, timeoutMs: 120_000 },
    );
    // The configurations come before the serving certificate's secret: until Kyverno has written it, its server
    // fails every TLS handshake, so the start waits for the API server to have its policy webhook admit a policy.
    await waitFor(
      `the API server to call ${POLICY_MUTATING_WEBHOOK}`,
      async () => {
        const before = webhookCalls(await plane.metrics(), POLICY_MUTATING_WEBHOOK);
        const answer = await plane.admin.request('POST', '/apis/kyverno.io/v1/clusterpolicies', {
          body: PROBE_POLICY,
          query: { dryRun: 'All' },
        });
        return answer.status === 201 && webhookCalls(await plane.metrics(), POLICY_MUTATING_WEBHOOK) > before
          ? true
          : undefined;
      },
      { failFast, timeoutMs: 60_000, intervalMs: 250 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { webhookNames: RESOURCE_MUTATING_WEBHOOKS, logFile, pid: controller.child.pid, release: build.release, stop };
}

/** How a ClusterPolicy's effect shows: a Pod sent with dryRun, and what holds of the Pod it comes back as. */
interface PolicyProbe {
  readonly namespace: string;
  readonly pod: Json;
  readonly mutated: (pod: ClusterPod) => boolean;
}

/**
 * `kubectl create -f` of a ClusterPolicy, then waits until Kyverno reports it Ready and a probe Pod created after it
 * (with dryRun: admitted, stored nowhere) comes back mutated: Kyverno's webhook configuration follows a policy
 * through an informer, and the API server follows the configuration through another.
 */
async function applyClusterPolicy(
  plane: ControlPlane,
  running: RunningKyverno,
  file: string,
  probe: PolicyProbe,
): Promise<void> {
  const created = await plane.kubectl(['create', '-f', file, '-o', 'name']);
  if (created.code !== 0) throw new Error(`kubectl create -f ${file}: ${created.stderr}`);
  const name = created.stdout.trim().slice(created.stdout.indexOf('/') + 1);
  await waitFor(
    `ClusterPolicy ${name} to be Ready`,
    async () =>
      hasCondition(await plane.admin.json<Established>('GET', `/apis/kyverno.io/v1/clusterpolicies/${name}`), 'Ready')
        ? true
        : undefined,
    { timeoutMs: 60_000 },
  );
  await waitFor(
    `ClusterPolicy ${name} to mutate a Pod`,
    async () => {
      const answer = await plane.admin.request('POST', `/api/v1/namespaces/${probe.namespace}/pods`, {
        body: probe.pod,
        query: { dryRun: 'All' },
      });
      return answer.status === 201 && probe.mutated(answer.body as ClusterPod) ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  const metrics = await plane.metrics();
  if (!running.webhookNames.some((webhook) => webhookCalls(metrics, webhook) > 0))
    throw new Error(
      `ClusterPolicy ${name} mutated a Pod, but the API server counts no call of ${running.webhookNames.join(' or ')}`,
    );
}

export { applyClusterPolicy, kyverno, startKyverno };
export type { Kyverno, PolicyProbe, RunningKyverno };
