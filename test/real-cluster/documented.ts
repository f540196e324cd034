// What docs/operations.md tells users to run, read from the page itself, so that the suite runs what the page says.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The kinds docs/operations.md's `kubectl get … -A -o json > cluster.json` lists. */
export async function documentedKinds(): Promise<string> {
  const shown = /^kubectl get (\S+) -A -o json > cluster\.json/m.exec(
    await readFile(join(ROOT, 'docs', 'operations.md'), 'utf8'),
  );
  if (shown === null) throw new Error('docs/operations.md shows no kubectl get … > cluster.json');
  return shown[1]!;
}
