// The one way a test file of the suite gets its control plane: started before its first test, stopped after its last.
import { afterAll, beforeAll, inject } from 'vitest';
import { binariesAt } from './binaries.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';

// A port freePort found can be taken by another process before the component binds it (other suites' servers, on a
// shared machine): such a start is stopped whole and made again on new ports, at most three times.
const PORT_TAKEN = /address already in use/;

async function startWithFreshPorts(binaries: Parameters<typeof startControlPlane>[0]): Promise<ControlPlane> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startControlPlane(binaries);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !PORT_TAKEN.test(error.message)) throw error;
    }
  }
}

/** Registers the file's control plane and returns its accessor (valid inside tests and hooks). */
export function useControlPlane(): () => ControlPlane {
  let plane: ControlPlane | undefined;
  beforeAll(async () => {
    plane = await startWithFreshPorts(binariesAt(inject('controlPlane')));
  }, 180_000);
  afterAll(async () => {
    await plane?.stop();
  }, 60_000);
  return () => {
    if (plane === undefined)
      throw new Error(
        'the control plane is not running: useControlPlane() gives it to tests and hooks after beforeAll',
      );
    return plane;
  };
}
