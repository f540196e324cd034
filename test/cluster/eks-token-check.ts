/**
 * An independent reading of EKS bearer tokens for tests: decodes "k8s-aws-v1." tokens and recomputes the
 * SigV4 query signature with node:crypto, as STS does when the EKS authenticator forwards the URL.
 */
import { createHash, createHmac } from 'node:crypto';
import { compareCodeUnits } from '../../lib/text/index.ts';

const TOKEN_PREFIX = 'k8s-aws-v1.';

/** The presigned URL inside a token, or undefined when the prefix or the unpadded base64url encoding is wrong. */
function decodeEksToken(token: string): URL | undefined {
  if (!token.startsWith(TOKEN_PREFIX)) return undefined;
  const encoded = token.slice(TOKEN_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  try {
    return new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The SigV4 signature of a presigned GET URL over the given signed headers (empty payload). */
function expectedSignature(url: URL, headers: Readonly<Record<string, string>>, secretAccessKey: string): string {
  const encode = (value: string): string =>
    encodeURIComponent(value).replace(
      /[!'()*]/g,
      (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
    );
  const query = [...url.searchParams.entries()]
    .filter(([key]) => key !== 'X-Amz-Signature')
    .map(([key, value]) => [encode(key), encode(value)] as const)
    .sort(([a], [b]) => compareCodeUnits(a, b))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const signedHeaders = Object.keys(headers).sort();
  const canonicalRequest = [
    'GET',
    url.pathname,
    query,
    ...signedHeaders.map((name) => `${name}:${headers[name]}`),
    '',
    signedHeaders.join(';'),
    createHash('sha256').update('').digest('hex'),
  ].join('\n');
  const amzDate = url.searchParams.get('X-Amz-Date') ?? '';
  const [, day = '', region = '', service = ''] = (url.searchParams.get('X-Amz-Credential') ?? '').split('/');
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    `${day}/${region}/${service}/aws4_request`,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), service), 'aws4_request');
  return createHmac('sha256', signingKey).update(stringToSign).digest('hex');
}

/** True when the token is a GetCallerIdentity URL for the region, signed for `clusterName` with the secret key. */
function isValidEksToken(
  token: string,
  expected: { clusterName: string; region: string; secretAccessKey: string },
): boolean {
  const url = decodeEksToken(token);
  if (url === undefined) return false;
  const host = `sts.${expected.region}.amazonaws.com`;
  return (
    url.host === host &&
    url.searchParams.get('Action') === 'GetCallerIdentity' &&
    url.searchParams.get('X-Amz-SignedHeaders') === 'host;x-k8s-aws-id' &&
    url.searchParams.get('X-Amz-Signature') ===
      expectedSignature(url, { host, 'x-k8s-aws-id': expected.clusterName }, expected.secretAccessKey)
  );
}

export { decodeEksToken, expectedSignature, isValidEksToken };
