// Builds the CLI bundle from this run's sources before any test, so that the tests which spawn bin/podmutation.mjs run
// the code under test, never a bundle left from an earlier build.
import { buildCli } from '../scripts/build-cli.ts';

export default async function setup(): Promise<void> {
  await buildCli();
}
