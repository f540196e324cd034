/**
 * The certificates of one control plane, generated fresh for each start as envtest does: a CA, the API server's
 * serving certificate, client certificates (the admin in system:masters), serving certificates for the webhooks the
 * tests run, and the ServiceAccount token signing key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { generate } from 'selfsigned';

/** A PEM certificate and its PEM private key. */
interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

/** What a control plane needs to start. */
interface ControlPlaneCertificates {
  readonly ca: KeyPair;
  readonly apiServer: KeyPair;
  readonly admin: KeyPair;
  /** The ServiceAccount token signing key (private) and its public half. */
  readonly serviceAccount: { readonly privateKey: string; readonly publicKey: string };
}

const ONE_DAY_MS = 24 * 3600_000;

function validity(): { notBeforeDate: Date; notAfterDate: Date } {
  // A minute back: the API server rejects a certificate whose notBefore is ahead of its own clock.
  return { notBeforeDate: new Date(Date.now() - 60_000), notAfterDate: new Date(Date.now() + ONE_DAY_MS) };
}

async function createCa(commonName: string): Promise<KeyPair> {
  const ca = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ...validity(),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: ca.cert, key: ca.private };
}

type Extension = NonNullable<Parameters<typeof generate>[1]>['extensions'] extends (infer E)[] | undefined ? E : never;

/** An EC P-256 certificate for `subject`, signed by `ca`, with `extensions` beside basicConstraints CA:false. */
async function signedLeaf(
  ca: KeyPair,
  subject: Parameters<typeof generate>[0],
  extensions: readonly Extension[],
): Promise<KeyPair> {
  const leaf = await generate(subject, {
    keyType: 'ec',
    algorithm: 'sha256',
    ...validity(),
    ca,
    extensions: [{ name: 'basicConstraints', cA: false }, ...extensions],
  });
  return { cert: leaf.cert, key: leaf.private };
}

/** A serving certificate for 127.0.0.1 and localhost (and `dnsNames`), signed by `ca`. */
function servingCertificate(ca: KeyPair, commonName: string, dnsNames: readonly string[] = []): Promise<KeyPair> {
  return signedLeaf(
    ca,
    [{ name: 'commonName', value: commonName }],
    [
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
          ...dnsNames.map((value) => ({ type: 2 as const, value })),
        ],
      },
    ],
  );
}

/** A client certificate: the API server reads the user from CN and the groups from O. */
function clientCertificate(ca: KeyPair, user: string, groups: readonly string[]): Promise<KeyPair> {
  return signedLeaf(
    ca,
    [{ name: 'commonName', value: user }, ...groups.map((group) => ({ name: 'organizationName', value: group }))],
    [
      { name: 'keyUsage', digitalSignature: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  );
}

/** Everything one control plane start needs, fresh. */
async function createControlPlaneCertificates(): Promise<ControlPlaneCertificates> {
  const ca = await createCa('podmutation-test-cluster-ca');
  // The in-cluster names of the API server, as kubeadm puts them on its serving certificate.
  const apiServer = await servingCertificate(ca, 'kube-apiserver', [
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
  ]);
  const admin = await clientCertificate(ca, 'podmutation-test-admin', ['system:masters']);
  const { privateKey, publicKey } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { ca, apiServer, admin, serviceAccount: { privateKey, publicKey } };
}

export { createControlPlaneCertificates, servingCertificate, clientCertificate };
export type { ControlPlaneCertificates, KeyPair };
