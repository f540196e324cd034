// The real-cluster suite's setup, once per run: the CLI bundle from this run's sources (as npm test builds it) and the
// control plane's binaries (built on the first run, then cached); each test file starts its own control plane.
import type { TestProject } from 'vitest/node';
import { buildCli } from '../../scripts/build-cli.ts';
import { controlPlaneBinaries } from './binaries.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder of the cached control plane binaries (binaries.ts), and the release they were built from. */
    controlPlane: { readonly dir: string; readonly release: string };
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const [binaries] = await Promise.all([
    controlPlaneBinaries((line) => console.log(`[control plane] ${line}`)),
    buildCli(),
  ]);
  project.provide('controlPlane', { dir: binaries.dir, release: binaries.release });
}
