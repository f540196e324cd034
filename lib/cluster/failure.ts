import { STATUS_CODES } from 'node:http';
import { ApiException } from '@kubernetes/client-node';
import { ClusterError } from '../errors/index.ts';

/** Machine-readable cause of a ClusterError, carried as `context.reason`. */
type ClusterFailureReason =
  | 'unauthorized'
  | 'forbidden'
  | 'notFound'
  | 'gone'
  | 'timeout'
  | 'network'
  | 'server'
  | 'malformed'
  | 'rejected'
  | 'configuration';

/** What was being attempted, for messages and log context. */
interface ClusterOperation {
  /** Lower-case phrase that starts the message, e.g. "listing podmutations.agent.cloudpilot.ai". */
  readonly action: string;
  /** Why a 404 happens for this operation. */
  readonly notFoundHint: string;
  /** What is contacted: the API server URL, or an AWS service and region (never carries credentials). */
  readonly target: string;
  readonly context?: Readonly<Record<string, unknown>>;
}

/** What the request middleware saw of one request, to tell transport failures from unreadable answers. */
interface RequestObservation {
  responded: boolean;
  readonly timeoutMs: number;
}

const SERVER_MESSAGE_LIMIT = 300;

const NOT_SIGNED_BY_CA = 'the server certificate is not signed by the cluster CA in the configuration';

// Node's TLS verification codes, by what they mean for the operator.
const TLS_PROBLEMS: Readonly<Record<string, string>> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: NOT_SIGNED_BY_CA,
  SELF_SIGNED_CERT_IN_CHAIN: NOT_SIGNED_BY_CA,
  DEPTH_ZERO_SELF_SIGNED_CERT: NOT_SIGNED_BY_CA,
  UNABLE_TO_GET_ISSUER_CERT: NOT_SIGNED_BY_CA,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: NOT_SIGNED_BY_CA,
  CERT_SIGNATURE_FAILURE: NOT_SIGNED_BY_CA,
  CERT_HAS_EXPIRED: 'the server certificate has expired',
  CERT_NOT_YET_VALID: 'the server certificate is not valid yet (check the clock)',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the server certificate is not issued for this server name',
};

/** A ClusterError with `context.reason` and the operation's context. */
function clusterError(
  operation: ClusterOperation,
  reason: ClusterFailureReason,
  detail: string,
  extra: { cause?: unknown; context?: Record<string, unknown> } = {},
): ClusterError {
  return new ClusterError(`${operation.action} failed: ${detail}`, {
    cause: extra.cause,
    context: { ...operation.context, target: operation.target, reason, ...extra.context },
  });
}

/** Classifies an error thrown by @kubernetes/client-node for one request into a ClusterError. */
function classifyRequestFailure(
  operation: ClusterOperation,
  error: unknown,
  observation: RequestObservation,
): ClusterError {
  if (error instanceof ClusterError) return error;
  if (error instanceof ApiException) return statusFailure(operation, error);
  if (isAbort(error)) {
    const detail = `no complete answer from ${operation.target} within ${observation.timeoutMs} ms`;
    return clusterError(operation, 'timeout', detail, { cause: error, context: { timeoutMs: observation.timeoutMs } });
  }
  // undici reports transport failures as TypeError ("fetch failed", "terminated"); anything else
  // thrown after the response arrived comes from decoding its body.
  if (error instanceof SyntaxError || (observation.responded && !(error instanceof TypeError))) {
    const detail = `the API server's answer could not be decoded as JSON (${innermostMessage(error)})`;
    return clusterError(operation, 'malformed', detail, { cause: error });
  }
  return transportFailure(operation, error);
}

/** Maps a non-2xx answer to a reason and a message that says what to fix. */
function statusFailure(operation: ClusterOperation, error: ApiException<unknown>): ClusterError {
  const code = error.code;
  const status = `${code} ${STATUS_CODES[code] ?? 'Unknown Status'}`;
  const said = serverMessage(error.body);
  const suffix = said === undefined ? '' : `; the API server said: ${said}`;
  const extra = { cause: error, context: { status: code } };
  if (code === 401) {
    return clusterError(
      operation,
      'unauthorized',
      `${status} (the API server did not accept the credentials: the token is invalid or expired, or the identity is not mapped into the cluster)${suffix}`,
      extra,
    );
  }
  if (code === 403) {
    return clusterError(
      operation,
      'forbidden',
      `${status} (the identity of these credentials lacks permission for this request: the sync's grants are infra/rbac.yaml, report's infra/rbac-report.yaml)${suffix}`,
      extra,
    );
  }
  if (code === 404) return clusterError(operation, 'notFound', `${status}: ${operation.notFoundHint}${suffix}`, extra);
  if (code === 410)
    return clusterError(operation, 'gone', `${status} (the list continue token expired)${suffix}`, extra);
  if (code >= 500 || code === 429) {
    return clusterError(operation, 'server', `${status} (the API server could not serve the request)${suffix}`, extra);
  }
  return clusterError(operation, 'rejected', `${status} (the API server rejected the request)${suffix}`, extra);
}

/** Network-level failures: refused or reset connections, DNS, TLS verification. */
function transportFailure(operation: ClusterOperation, error: unknown): ClusterError {
  const code = errorCode(error);
  const tlsProblem = code === undefined ? undefined : TLS_PROBLEMS[code];
  if (tlsProblem !== undefined) {
    return clusterError(
      operation,
      'network',
      `TLS verification of ${operation.target} failed (${code}): ${tlsProblem}`,
      {
        cause: error,
        context: { code },
      },
    );
  }
  const detail = code === undefined ? innermostMessage(error) : `${code}: ${innermostMessage(error)}`;
  return clusterError(operation, 'network', `could not reach ${operation.target} (${detail})`, {
    cause: error,
    context: code === undefined ? {} : { code },
  });
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

/** The innermost `code` of an error chain (undici wraps socket errors in `cause`). */
function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  let code: string | undefined;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const own = (current as { code?: unknown }).code;
    if (typeof own === 'string') code = own;
    current = current.cause;
  }
  return code;
}

/** The innermost message of an error chain, for a one-line description. */
function innermostMessage(error: unknown): string {
  let current: unknown = error;
  let message = String(error);
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    message = current.message;
    current = current.cause;
  }
  return message;
}

/** The `message` of a Kubernetes Status body, shortened; undefined when the body is not a Status. */
function serverMessage(body: unknown): string | undefined {
  let status: unknown = body;
  if (typeof body === 'string') {
    try {
      status = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (typeof status !== 'object' || status === null) return undefined;
  const message = (status as { message?: unknown }).message;
  if (typeof message !== 'string' || message === '') return undefined;
  return message.length > SERVER_MESSAGE_LIMIT ? `${message.slice(0, SERVER_MESSAGE_LIMIT)}...` : message;
}

export { clusterError, classifyRequestFailure, innermostMessage };
export type { ClusterFailureReason, ClusterOperation, RequestObservation };
