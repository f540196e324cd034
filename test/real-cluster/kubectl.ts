/**
 * The suite's kubectl steps, as docs/operations.md has people run them against the cluster: commands that must
 * succeed, objects created or applied from one YAML stream, infra/ applied and the PodMutation CRD waited for, the
 * waits for a rollout and for a binding to take effect, and a printed script run by bash with the built kubectl.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { runProcess, type ProcessRun } from '../support/processes.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { waitFor } from './processes.ts';

const INFRA = fileURLToPath(new URL('../../infra', import.meta.url));

/** kubectl ARGS as the admin, `input` on its stdin; asserts that it exits 0 and returns what it printed. */
async function kubectlOk(plane: ControlPlane, args: readonly string[], input?: string): Promise<string> {
  const run = await plane.kubectl(args, input === undefined ? {} : { input });
  expect(run.code, `kubectl ${args.join(' ')}: ${run.stderr}`).toBe(0);
  return run.stdout;
}

/**
 * The cluster's Nodes and NodePools as `kubectl get nodes,nodepools -o yaml` prints them (Nodes alone where Karpenter's
 * CRD is not installed), written to `name` in the plane's folder: the `--capacity` of a report read from files, so
 * that it judges the Pods as the report read from the cluster does.
 */
async function capacityFile(plane: ControlPlane, name: string): Promise<string> {
  const both = await plane.kubectl(['get', 'nodes,nodepools.karpenter.sh', '-o', 'yaml']);
  const printed = both.code === 0 ? both.stdout : await kubectlOk(plane, ['get', 'nodes', '-o', 'yaml']);
  const file = join(plane.dir, name);
  await writeFile(file, printed);
  return file;
}

/** `kubectl create -f -` (or apply) of the objects as one YAML stream. */
function kubectlObjects(plane: ControlPlane, verb: 'create' | 'apply', objects: readonly Json[]): Promise<string> {
  return kubectlOk(plane, [verb, '-f', '-'], objects.map((object) => stringify(object)).join('---\n'));
}

/** A PodMutation resource of that name and spec, as a rule file or the cluster holds it. */
function podMutationObject(name: string, spec: Json): Json {
  return { apiVersion: 'agent.cloudpilot.ai/v1alpha1', kind: 'PodMutation', metadata: { name }, spec };
}

/** `kubectl apply` of one PodMutation. */
async function applyPodMutation(plane: ControlPlane, name: string, spec: Json): Promise<void> {
  await kubectlObjects(plane, 'apply', [podMutationObject(name, spec)]);
}

/** Waits until the API server serves PodMutations: `kubectl wait` for the CRD's Established condition. */
async function untilPodMutationsServed(plane: ControlPlane): Promise<void> {
  await kubectlOk(plane, [
    'wait',
    '--for=condition=Established',
    'crd/podmutations.agent.cloudpilot.ai',
    '--timeout=60s',
  ]);
}

/** `kubectl apply -k infra/ -l SELECTOR` (docs/operations.md picks one access mode by label), then the CRD's wait. */
async function applyInfra(plane: ControlPlane, selector: string): Promise<void> {
  await kubectlOk(plane, ['apply', '-k', INFRA, '-l', selector]);
  await untilPodMutationsServed(plane);
}

/** `kubectl rollout status` of a workload (kind/name) until it completes. */
async function untilRolledOut(
  plane: ControlPlane,
  namespace: string,
  workload: string,
  timeout = '90s',
): Promise<void> {
  await kubectlOk(plane, ['rollout', 'status', workload, '-n', namespace, `--timeout=${timeout}`]);
}

/** What `kubectl auth can-i ARGS` answers (ARGS name the identity with --as): the RBAC authorizer's own verdict. */
async function canI(plane: ControlPlane, args: readonly string[]): Promise<boolean> {
  const answer = await plane.kubectl(['auth', 'can-i', ...args]);
  return answer.stdout.trim() === 'yes';
}

/** Waits until `kubectl auth can-i ARGS` says yes: a binding takes effect through the RBAC authorizer's informer. */
async function untilAllowed(plane: ControlPlane, who: string, args: readonly string[]): Promise<void> {
  await waitFor(`${who} to be allowed to ${args.join(' ')}`, async () =>
    (await canI(plane, args)) ? true : undefined,
  );
}

/** Writes a script `report --restart-commands` printed and runs it with bash, the built kubectl first on PATH. */
async function runScript(plane: ControlPlane, file: string, script: string): Promise<ProcessRun> {
  const path = join(plane.dir, file);
  await writeFile(path, script);
  return runProcess('bash', [path], {
    env: {
      ...process.env,
      PATH: `${dirname(plane.binaries.path('kubectl'))}:${process.env['PATH'] ?? ''}`,
      KUBECONFIG: plane.adminKubeconfig,
    },
  });
}

export {
  applyInfra,
  capacityFile,
  applyPodMutation,
  canI,
  kubectlObjects,
  kubectlOk,
  podMutationObject,
  runScript,
  untilAllowed,
  untilPodMutationsServed,
  untilRolledOut,
};
