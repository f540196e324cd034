/** An in-process DynamoDB (dynalite) on loopback, for the local webhook server and tests. */
import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';
import { StoreError } from '../../errors/index.ts';

/** A running embedded DynamoDB: its endpoint URL and how to stop it. */
interface EmbeddedDynamo {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** Starts dynalite in memory on 127.0.0.1 and a free port; tables become ACTIVE at once. */
async function startEmbeddedDynamo(): Promise<EmbeddedDynamo> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(new StoreError(`embedded DynamoDB could not listen on 127.0.0.1: ${error.message}`, { cause: error })),
    );
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error?: Error) => (error ? reject(error) : resolve()));
        // close() only ends idle keep-alive sockets; dropping requests still in flight keeps shutdown immediate.
        server.closeAllConnections();
      }),
  };
}

export { startEmbeddedDynamo };
export type { EmbeddedDynamo };
