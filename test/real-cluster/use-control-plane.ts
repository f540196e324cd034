// The one way a test file of the suite gets its control plane: started before its first test, stopped after its last.
import { afterAll, beforeAll, inject } from 'vitest';
import { binariesAt } from './binaries.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';

/** Registers the file's control plane and returns its accessor (valid inside tests and hooks). */
export function useControlPlane(): () => ControlPlane {
  let plane: ControlPlane | undefined;
  beforeAll(async () => {
    plane = await startControlPlane(binariesAt(inject('controlPlane')));
  }, 180_000);
  afterAll(async () => {
    await plane?.stop();
  }, 60_000);
  return () => {
    if (plane === undefined) throw new Error('the control plane is not running: useControlPlane() gives it to tests and hooks after beforeAll');
    return plane;
  };
}
