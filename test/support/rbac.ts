/** The RBAC manifests of infra/, read as the tests of each read them. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/** A ClusterRole or binding of an infra/ manifest, as far as the tests read it. */
export interface RbacManifest {
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly rules?: readonly {
    readonly apiGroups: readonly string[];
    readonly resources: readonly string[];
    readonly verbs: readonly string[];
  }[];
  readonly roleRef?: unknown;
  readonly subjects?: readonly unknown[];
}

/** Every document of infra/FILE. */
export function infraManifests(file: string): RbacManifest[] {
  return parseAllDocuments(readFileSync(fileURLToPath(new URL(`../../infra/${file}`, import.meta.url)), 'utf8')).map(
    (document) => document.toJS() as RbacManifest,
  );
}
