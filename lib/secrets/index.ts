/**
 * The one way the product reads a secret: GetSecretValue of a Secrets Manager secret, its SecretString or nothing.
 * Used by the webhook token (lib/endpoint) and the kubeconfig of the sync (lib/cluster), which each turn a failure
 * into their own typed error; the secret's value never appears in a message.
 */
import { GetSecretValueCommand, SecretsManagerClient, type GetSecretValueCommandOutput } from '@aws-sdk/client-secrets-manager';
import { SECRET_ARN } from '../values/index.ts';

/** The one Secrets Manager call the product makes; satisfied by SecretsManagerClient. */
interface SecretReader {
  send(command: GetSecretValueCommand): Promise<GetSecretValueCommandOutput>;
}

/** What reading a secret gave: its SecretString, or why there is none (the call's error, or no string). */
type SecretRead = { readonly text: string } | { readonly failure: unknown } | { readonly empty: true };

/** A Secrets Manager client for the secret's own region (an ARN names it), or the SDK's default region otherwise. */
function secretReaderFor(secretArn: string, options: { readonly requestTimeoutMs?: number } = {}): SecretReader {
  const region = SECRET_ARN.pattern.exec(secretArn)?.[1];
  return new SecretsManagerClient({
    ...(region === undefined ? {} : { region }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestHandler: { requestTimeout: options.requestTimeoutMs } }),
  });
}

/**
 * Reads the SecretString of the secret's version with `versionStage` (default AWSCURRENT); an empty or missing
 * string is `empty`, a failed call its `failure`. Never throws.
 */
async function readSecretString(reader: SecretReader, secretArn: string, versionStage?: string): Promise<SecretRead> {
  let output: GetSecretValueCommandOutput;
  try {
    output = await reader.send(new GetSecretValueCommand({ SecretId: secretArn, ...(versionStage === undefined ? {} : { VersionStage: versionStage }) }));
  } catch (failure) {
    return { failure };
  }
  const text = output.SecretString;
  return text === undefined || text.trim() === '' ? { empty: true } : { text };
}

/** True when a read failed because the secret, or the version with the asked stage, does not exist. */
function isSecretNotFound(failure: unknown): boolean {
  return failure instanceof Error && failure.name === 'ResourceNotFoundException';
}

export { readSecretString, secretReaderFor, isSecretNotFound };
export type { SecretReader, SecretRead };
