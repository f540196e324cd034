/**
 * A real Kubernetes control plane on loopback, started the way envtest starts one, plus what envtest leaves out:
 * etcd, kube-apiserver (the real RBAC authorizer, the default admission plugins, ServiceAccount tokens),
 * kube-controller-manager (without the node-lifecycle controller, so Nodes without kubelets stay Ready) and
 * kube-scheduler, the test Nodes, and the kubelet stand-in that marks bound Pods Running and Ready.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runProcess, type ProcessRun } from '../support/processes.ts';
import { createApiClient, type ApiClient } from './api.ts';
import type { ControlPlaneBinaries } from './binaries.ts';
import { createControlPlaneCertificates, type ControlPlaneCertificates } from './certificates.ts';
import { startKubelet, type Kubelet } from './kubelet.ts';
import { createTestNodes } from './nodes.ts';
import { freePort, startSupervised, waitFor, type Supervised } from './processes.ts';

/** What a command printed and how it ended. */
type CommandResult = ProcessRun;

/** A running control plane. */
interface ControlPlane {
  /** https://127.0.0.1:PORT */
  readonly server: string;
  readonly certificates: ControlPlaneCertificates;
  /** A folder of this control plane's own, removed when it stops. */
  readonly dir: string;
  readonly caFile: string;
  /** A kubeconfig file of the cluster admin (system:masters), with every credential inline. */
  readonly adminKubeconfig: string;
  /** The admin's client of the suite's own steps. */
  readonly admin: ApiClient;
  readonly binaries: ControlPlaneBinaries;
  /** Runs the release's kubectl, as the admin unless `kubeconfig` is given. */
  kubectl(
    args: readonly string[],
    options?: { readonly input?: string; readonly kubeconfig?: string; readonly env?: NodeJS.ProcessEnv },
  ): Promise<CommandResult>;
  /** Creates the namespace (or updates its labels) and waits for its default ServiceAccount, without which no Pod is admitted. */
  ensureNamespace(name: string, labels?: Readonly<Record<string, string>>): Promise<void>;
  /** Writes a kubeconfig of this cluster for a bearer token (a ServiceAccount's) and returns its path. */
  tokenKubeconfig(name: string, token: string): Promise<string>;
  /** The API server's Prometheus metrics, as text. */
  metrics(): Promise<string>;
  /** The process id of each component (setpriv execs the binary, so it is the binary's own). */
  readonly components: readonly { readonly name: string; readonly pid: number | undefined }[];
  /** Errors of the kubelet stand-in so far (a test that needs Pods Running can assert there are none). */
  readonly kubeletErrors: readonly Error[];
  stop(): Promise<void>;
}

const DIR_PREFIX = 'podmutation-cluster-';
const OWNER_FILE = 'owner.pid';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The folders of control planes whose starter was killed before it could remove them (its processes died with it). */
async function removeAbandonedFolders(): Promise<void> {
  for (const entry of await readdir(tmpdir())) {
    if (!entry.startsWith(DIR_PREFIX)) continue;
    const owner = Number(await readFile(join(tmpdir(), entry, OWNER_FILE), 'utf8').catch(() => 'NaN'));
    if (Number.isInteger(owner) && !isRunning(owner)) await rm(join(tmpdir(), entry), { recursive: true, force: true });
  }
}

// The cluster's Service CIDR; the API server takes its first address for the kubernetes Service.
const SERVICE_CIDR = '10.96.0.0/16';

/** The admission plugins the API server runs besides its default ones. */
const EXTRA_ADMISSION_PLUGINS: readonly string[] = [
  'ExtendedResourceToleration',
  'PodNodeSelector',
  'PodTolerationRestriction',
];

/** A kubeconfig with one cluster, one user and one context, credentials inline (any client, any working directory). */
function kubeconfigYaml(server: string, caPem: string, user: Record<string, string>): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'test', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } },
    ],
    users: [{ name: 'user', user }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'user' } }],
    'current-context': 'test',
  });
}

async function healthy(url: string, certificates: ControlPlaneCertificates): Promise<true | undefined> {
  const client = createApiClient({
    server: url,
    ca: certificates.ca.cert,
    cert: certificates.admin.cert,
    key: certificates.admin.key,
  });
  try {
    const answer = await client.request('GET', new URL(url).pathname);
    return answer.status === 200 ? true : undefined;
  } finally {
    client.close();
  }
}

/**
 * Starts etcd, the API server, the controller manager and the scheduler on free loopback ports, creates the test
 * Nodes and starts the kubelet stand-in. Rejects with the failing component's log when one does not come up, leaving
 * nothing running.
 */
async function startControlPlane(binaries: ControlPlaneBinaries): Promise<ControlPlane> {
  await removeAbandonedFolders();
  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  await writeFile(join(dir, OWNER_FILE), String(process.pid));
  const processes: Supervised[] = [];
  let api: ApiClient | undefined;
  let kubelet: Kubelet | undefined;
  const kubeletErrors: Error[] = [];
  const stopAll = async (): Promise<void> => {
    await kubelet?.stop();
    api?.close();
    for (const component of processes.splice(0).reverse()) await component.stop();
    await rm(dir, { recursive: true, force: true });
  };
  // Any component that exits while another is awaited fails the start at once, with its log.
  const anyExited = (): string | undefined => {
    const dead = processes.find((component) => component.exited() !== undefined);
    return dead === undefined ? undefined : `${dead.name} exited (${dead.exited()}):\n${dead.logTail()}`;
  };

  try {
    const certificates = await createControlPlaneCertificates();
    const file = (name: string) => join(dir, name);
    await Promise.all([
      writeFile(file('ca.crt'), certificates.ca.cert),
      writeFile(file('apiserver.crt'), certificates.apiServer.cert),
      writeFile(file('apiserver.key'), certificates.apiServer.key),
      writeFile(file('sa.key'), certificates.serviceAccount.privateKey),
      writeFile(file('sa.pub'), certificates.serviceAccount.publicKey),
    ]);
    const [etcdPort, peerPort, apiPort, managerPort, schedulerPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const server = `https://127.0.0.1:${apiPort}`;
    const adminKubeconfig = file('admin.kubeconfig');
    await writeFile(
      adminKubeconfig,
      kubeconfigYaml(server, certificates.ca.cert, {
        'client-certificate-data': Buffer.from(certificates.admin.cert).toString('base64'),
        'client-key-data': Buffer.from(certificates.admin.key).toString('base64'),
      }),
    );

    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    processes.push(
      startSupervised(
        'etcd',
        binaries.path('etcd'),
        [
          `--data-dir=${file('etcd')}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
          // As envtest runs it: a test cluster's data need not survive a power cut, and fsync dominates on CI disks.
          '--unsafe-no-fsync',
          '--log-level=warn',
        ],
        { logFile: file('etcd.log') },
      ),
    );
    await waitFor('etcd to be healthy', async () => ((await fetch(`${etcdUrl}/health`)).ok ? true : undefined), {
      failFast: anyExited,
    });

    processes.push(
      startSupervised(
        'kube-apiserver',
        binaries.path('kube-apiserver'),
        [
          `--etcd-servers=${etcdUrl}`,
          '--bind-address=127.0.0.1',
          '--advertise-address=127.0.0.1',
          // The endpoint reconciler refuses a loopback address; envtest turns it off the same way.
          '--endpoint-reconciler-type=none',
          `--secure-port=${apiPort}`,
          `--cert-dir=${file('apiserver-certs')}`,
          `--tls-cert-file=${file('apiserver.crt')}`,
          `--tls-private-key-file=${file('apiserver.key')}`,
          `--client-ca-file=${file('ca.crt')}`,
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
          `--service-account-key-file=${file('sa.pub')}`,
          `--service-account-signing-key-file=${file('sa.key')}`,
          '--authorization-mode=RBAC',
          // Besides the default plugins, the mutating ones that change a Pod before webhooks only where a Pod or its
          // namespace asks for it: ExtendedResourceToleration (on in EKS) for Pods requesting an extended resource,
          // PodNodeSelector and PodTolerationRestriction for namespaces with their scheduler.alpha.kubernetes.io/
          // annotations; PodTolerationRestriction also tolerates memory-pressure for every Pod that requests cpu or
          // memory, which no other file's Pods do (test/real-cluster/admission-plugins.test.ts).
          `--enable-admission-plugins=${EXTRA_ADMISSION_PLUGINS.join(',')}`,
          '--allow-privileged=true',
          '--profiling=false',
        ],
        { logFile: file('kube-apiserver.log') },
      ),
    );
    await waitFor('kube-apiserver to be ready', () => healthy(`${server}/readyz`, certificates), {
      failFast: anyExited,
      timeoutMs: 90_000,
    });
    api = createApiClient({
      server,
      ca: certificates.ca.cert,
      cert: certificates.admin.cert,
      key: certificates.admin.key,
    });

    const componentFlags = (port: number) => [
      `--kubeconfig=${adminKubeconfig}`,
      `--authentication-kubeconfig=${adminKubeconfig}`,
      `--authorization-kubeconfig=${adminKubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      // Served with the API server's certificate (127.0.0.1, signed by the cluster CA), so the health probes verify it.
      `--tls-cert-file=${file('apiserver.crt')}`,
      `--tls-private-key-file=${file('apiserver.key')}`,
      '--leader-elect=false',
    ];
    processes.push(
      startSupervised(
        'kube-controller-manager',
        binaries.path('kube-controller-manager'),
        [
          ...componentFlags(managerPort),
          // No kubelets: the node-lifecycle controller would mark every Node NotReady and evict its Pods; node IPAM
          // and attach-detach need what only kubelets report.
          '--controllers=*,-node-lifecycle-controller,-node-ipam-controller,-persistentvolume-attach-detach-controller',
          // The token controller fills ServiceAccount token Secrets (infra/rbac.yaml's kubeconfig-mode recipe).
          `--service-account-private-key-file=${file('sa.key')}`,
          `--root-ca-file=${file('ca.crt')}`,
        ],
        { logFile: file('kube-controller-manager.log') },
      ),
      startSupervised('kube-scheduler', binaries.path('kube-scheduler'), componentFlags(schedulerPort), {
        logFile: file('kube-scheduler.log'),
      }),
    );
    await Promise.all([
      waitFor(
        'kube-controller-manager to be healthy',
        () => healthy(`https://127.0.0.1:${managerPort}/healthz`, certificates),
        { failFast: anyExited },
      ),
      waitFor(
        'kube-scheduler to be healthy',
        () => healthy(`https://127.0.0.1:${schedulerPort}/healthz`, certificates),
        { failFast: anyExited },
      ),
    ]);
    // Pods can only be created once the namespace's default ServiceAccount exists (the ServiceAccount admission plugin).
    const admin = api;
    const serviceAccountOf = (namespace: string) =>
      waitFor(
        `the default ServiceAccount of ${namespace}`,
        async () =>
          (await admin.request('GET', `/api/v1/namespaces/${namespace}/serviceaccounts/default`)).status === 200
            ? true
            : undefined,
        {
          failFast: anyExited,
        },
      );
    await serviceAccountOf('default');
    await createTestNodes(admin);
    kubelet = startKubelet(admin, (error) => kubeletErrors.push(error));

    const kubectl: ControlPlane['kubectl'] = (args, options = {}) =>
      runProcess(binaries.path('kubectl'), [`--kubeconfig=${options.kubeconfig ?? adminKubeconfig}`, ...args], {
        ...(options.input === undefined ? {} : { input: options.input }),
        env: { ...process.env, ...options.env },
      });
    let stopping: Promise<void> | undefined;
    return {
      server,
      certificates,
      dir,
      caFile: file('ca.crt'),
      adminKubeconfig,
      admin,
      binaries,
      kubectl,
      ensureNamespace: async (name, labels = {}) => {
        const applied = await kubectl(['apply', '-f', '-'], {
          input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } }),
        });
        if (applied.code !== 0) throw new Error(`kubectl apply of namespace ${name}: ${applied.stderr}`);
        await serviceAccountOf(name);
      },
      tokenKubeconfig: async (name, token) => {
        const path = file(`${name}.kubeconfig`);
        await writeFile(path, kubeconfigYaml(server, certificates.ca.cert, { token }));
        return path;
      },
      metrics: async () => {
        const answer = await admin.request('GET', '/metrics');
        if (answer.status !== 200) throw new Error(`GET /metrics: HTTP ${answer.status}`);
        return answer.text;
      },
      components: processes.map(({ name, child }) => ({ name, pid: child.pid })),
      kubeletErrors,
      stop: () => (stopping ??= stopAll()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

export { startControlPlane, kubeconfigYaml };
export type { ControlPlane, CommandResult };
