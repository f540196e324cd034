// npm run crd: writes infra/crd.yaml and infra/podplacement-crd.yaml from the one declaration of the contract (lib/api/schema.ts).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { podMutationCrdYaml, podPlacementCrdYaml } from '../lib/api/crd.ts';

for (const [file, yaml] of [
  ['crd.yaml', podMutationCrdYaml()],
  ['podplacement-crd.yaml', podPlacementCrdYaml()],
] as const) {
  const target = fileURLToPath(new URL(`../infra/${file}`, import.meta.url));
  writeFileSync(target, yaml);
  console.log(`wrote ${target}`);
}
