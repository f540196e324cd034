/** Ambient types for dynalite 4 (ships none): an in-process DynamoDB served over HTTP. */
declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    readonly createTableMs?: number;
    readonly deleteTableMs?: number;
    readonly updateTableMs?: number;
    readonly maxItemSizeKb?: number;
    readonly path?: string;
  }

  function dynalite(options?: DynaliteOptions): Server;
  export = dynalite;
}
