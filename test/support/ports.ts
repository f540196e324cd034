import { createServer } from 'node:net';

/** A port nothing listens on at the moment, on 127.0.0.1 (for a server a test starts as a separate process). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('the operating system gave no port');
  return address.port;
}
