// Kept out of lib/store/index.ts so that the admission bundle never contains dynalite and its LevelDB
// dependencies (measured: 263 KB of a 806 KB minified bundle). Only the local server and tests import this.
import { startEmbeddedDynamo } from './embedded.ts';
import type { EmbeddedDynamo } from './embedded.ts';

export { startEmbeddedDynamo };
export type { EmbeddedDynamo };
