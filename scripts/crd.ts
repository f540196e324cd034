// npm run crd: writes infra/crd.yaml from the one declaration of the PodMutation contract (lib/api/schema.ts).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { podMutationCrdYaml } from '../lib/api/crd.ts';

const target = fileURLToPath(new URL('../infra/crd.yaml', import.meta.url));
writeFileSync(target, podMutationCrdYaml());
console.log(`wrote ${target}`);
