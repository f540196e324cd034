/**
 * The functions' stand-in for @aws-sdk/credential-provider-node, swapped in by the build (esbuild alias).
 * Lambda always puts the execution role's credentials in the environment, so the SDK's default chain
 * (profiles, SSO, IMDS, web identity and the nested STS/SSO clients they need) is dead weight there:
 * measured, it is 130 KiB of the admission bundle and about 27 ms of its load time.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/** The SDK's `defaultProvider` signature, answering from the environment only. */
const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}): ReturnType<typeof fromEnv> => fromEnv(init);

export { defaultProvider };
