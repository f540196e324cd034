/**
 * The PodMutation corpus under test/infra/corpus: real YAML files, one resource each.
 *   valid/       accepted by both enforcement points;
 *   invalid/     rejected by both; each names the CRD rejection it exercises in a `# crd: FIELD: MESSAGE` line;
 *   exceptions/  accepted by the CRD, rejected by the validator (checks Kubernetes cannot express).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import type { CustomResourceDefinition } from './structural-schema.ts';

/** One corpus file: its name, the decoded resource and, for invalid files, the expected CRD rejection. */
export interface CorpusEntry {
  readonly file: string;
  readonly resource: unknown;
  readonly expectedRejection?: string;
}

const corpusRoot = new URL('./corpus/', import.meta.url);

/** Loads every file of one corpus folder, sorted by name. */
export function loadCorpus(folder: 'valid' | 'invalid' | 'exceptions'): CorpusEntry[] {
  const directory = new URL(`${folder}/`, corpusRoot);
  return readdirSync(directory)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => {
      const text = readFileSync(new URL(file, directory), 'utf8');
      const expectedRejection = /^# crd: (.+)$/m.exec(text)?.[1];
      return {
        file,
        resource: parse(text) as unknown,
        ...(expectedRejection === undefined ? {} : { expectedRejection }),
      };
    });
}

/** Reads and decodes a manifest of infra/ (multi-document files give every document). */
export function loadInfraManifest(name: 'crd.yaml' | 'podplacement-crd.yaml' | 'rbac.yaml'): unknown[] {
  const path = fileURLToPath(new URL(`../../infra/${name}`, import.meta.url));
  return parseAllDocuments(readFileSync(path, 'utf8')).map((document) => {
    if (document.errors.length > 0) throw new Error(`infra/${name}: ${document.errors[0]!.message}`);
    return document.toJS() as unknown;
  });
}

/** The CRD of infra/crd.yaml, or of infra/podplacement-crd.yaml. */
export function loadCrd(file: 'crd.yaml' | 'podplacement-crd.yaml' = 'crd.yaml'): CustomResourceDefinition {
  const [crd] = loadInfraManifest(file);
  return crd as CustomResourceDefinition;
}
