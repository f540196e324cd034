/**
 * infra/ is a kustomize base: `kubectl apply -k infra/` installs the CRD and the sync's RBAC. No
 * kustomize binary runs offline here, so the test reads the kustomization as kustomize does for a plain base (the
 * resources' documents, in order) and checks what that yields.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

const INFRA = fileURLToPath(new URL('../../infra/', import.meta.url));

interface Kustomization {
  readonly apiVersion: string;
  readonly kind: string;
  readonly resources: readonly string[];
}

interface KubernetesObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
}

const kustomization = parse(readFileSync(`${INFRA}kustomization.yaml`, 'utf8')) as Kustomization;

/** The objects `kustomize build infra/` yields for a base of plain resources: every document of each file, in order. */
function built(): KubernetesObject[] {
  return kustomization.resources.flatMap((resource) =>
    parseAllDocuments(readFileSync(`${INFRA}${resource}`, 'utf8')).map((document) => {
      expect(document.errors).toEqual([]);
      return document.toJS() as KubernetesObject;
    }),
  );
}

/** What `kubectl apply -l 'ACCESS!=value'` keeps: objects without the access label or with another value. */
function selected(objects: readonly KubernetesObject[], excluded: string): string[] {
  return objects
    .filter((object) => object.metadata.labels?.['podmutation.agent.cloudpilot.ai/access'] !== excluded)
    .map(({ kind, metadata }) => `${kind}/${metadata.name}`);
}

describe('infra/kustomization.yaml', () => {
  it('is a kustomize Kustomization that lists only plain resources, so any kustomize version builds it', () => {
    expect(Object.keys(kustomization).sort()).toEqual(['apiVersion', 'kind', 'resources']);
    expect(kustomization).toMatchObject({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' });
  });

  it('names files that exist in infra/', () => {
    const files = new Set(readdirSync(INFRA));
    expect(kustomization.resources.filter((resource) => !files.has(resource))).toEqual([]);
  });

  it('builds the CRD first, then the RBAC, each object once', () => {
    const names = built().map(({ kind, metadata }) => `${kind}/${metadata.namespace ?? ''}/${metadata.name}`);

    expect(names[0]).toBe('CustomResourceDefinition//podmutations.agent.cloudpilot.ai');
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('ClusterRole//podmutation-sync');
  });

  it('applies the EKS mode with the selector docs/design.md gives', () => {
    expect(selected(built(), 'kubeconfig')).toEqual([
      'CustomResourceDefinition/podmutations.agent.cloudpilot.ai',
      'CustomResourceDefinition/podplacements.agent.cloudpilot.ai',
      'ClusterRole/podmutation-sync',
      'ClusterRoleBinding/podmutation-sync',
    ]);
  });

  it('applies the kubeconfig mode with the selector docs/design.md gives', () => {
    expect(selected(built(), 'eks-access-entry')).toEqual([
      'CustomResourceDefinition/podmutations.agent.cloudpilot.ai',
      'CustomResourceDefinition/podplacements.agent.cloudpilot.ai',
      'Namespace/podmutation-system',
      'ClusterRole/podmutation-sync',
      'ServiceAccount/podmutation-sync',
      'ClusterRoleBinding/podmutation-sync-serviceaccount',
    ]);
  });

  it('leaves out the webhook configuration, which needs the deployment URL and token', () => {
    expect(built().map(({ kind }) => kind)).not.toContain('MutatingWebhookConfiguration');
  });
});
