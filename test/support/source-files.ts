/** The repository's own source files, for the tests that read code as text (architecture, configuration). */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Every TypeScript and JavaScript module under a folder (repository-relative paths), declarations and packages left out. */
export function sourceFiles(folder: string): string[] {
  if (!existsSync(join(ROOT, folder))) return [];
  const files: string[] = [];
  for (const entry of readdirSync(join(ROOT, folder))) {
    if (entry === 'node_modules') continue;
    const path = join(folder, entry);
    if (statSync(join(ROOT, path)).isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|mts|mjs)$/.test(entry) && !entry.endsWith('.d.ts')) files.push(path);
  }
  return files;
}
