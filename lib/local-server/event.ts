/** Conversion between Node HTTP requests and API Gateway HTTP API (payload 2.0) events and results. */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** The request line and headers of one HTTP request, as the event needs them. */
interface RequestHead {
  readonly method: string;
  readonly url: string;
  readonly httpVersion: string;
  readonly headers: IncomingHttpHeaders;
  readonly sourceIp: string;
}

const ADMIT_ROUTE = /^\/admit\/([^/]+)\/?$/;
// API Gateway passes textual bodies as strings and base64-encodes the rest; these media types count as text.
const TEXT_MEDIA_TYPE =
  /^(text\/[^;]*|application\/(json|[^;]*\+json|xml|[^;]*\+xml|javascript|x-www-form-urlencoded))\s*(;|$)/i;
function decodedSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Headers as API Gateway passes them: lower-case names, repeated values joined with commas, cookies split out. */
function eventHeaders(headers: IncomingHttpHeaders): { headers: Record<string, string>; cookies: string[] } {
  const result: Record<string, string> = {};
  let cookies: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (name === 'cookie') {
      cookies = (Array.isArray(value) ? value.join('; ') : value).split(/;\s*/).filter((cookie) => cookie !== '');
      continue;
    }
    result[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return { headers: result, cookies };
}

/**
 * The event API Gateway would send for a request: route key and path parameter for /admit/{token}, the body as a
 * string when its content type is textual and it is valid UTF-8, else base64 with isBase64Encoded true.
 */
function toHttpApiEvent(head: RequestHead, body: Buffer, now: Date): APIGatewayProxyEventV2 {
  // Split by hand: new URL() is the largest cost of this conversion, and a request target needs no resolution.
  const queryStart = head.url.indexOf('?');
  const rawPath = queryStart === -1 ? head.url : head.url.slice(0, queryStart);
  const rawQueryString = queryStart === -1 ? '' : head.url.slice(queryStart + 1);
  const route = ADMIT_ROUTE.exec(rawPath);
  const routeKey = route === null ? '$default' : `${head.method} /admit/{token}`;
  const { headers, cookies } = eventHeaders(head.headers);
  const textual = TEXT_MEDIA_TYPE.test(headers['content-type'] ?? '') && isUtf8(body);
  const host = headers.host ?? 'localhost';
  const queryStringParameters = rawQueryString === '' ? {} : Object.fromEntries(new URLSearchParams(rawQueryString));
  return {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString,
    ...(cookies.length === 0 ? {} : { cookies }),
    headers,
    ...(Object.keys(queryStringParameters).length === 0 ? {} : { queryStringParameters }),
    ...(route === null ? {} : { pathParameters: { token: decodedSegment(route[1]!) } }),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: host,
      domainPrefix: host.split('.')[0] ?? host,
      http: {
        method: head.method,
        path: rawPath,
        protocol: `HTTP/${head.httpVersion}`,
        sourceIp: head.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length === 0 ? {} : { body: textual ? body.toString('utf8') : body.toString('base64') }),
    isBase64Encoded: body.length > 0 && !textual,
  };
}

/** True when API Gateway would route the request to the function: exactly POST /admit/{token} (an optional trailing "/"). */
function isAdmissionRoute(head: RequestHead): boolean {
  if (head.method !== 'POST') return false;
  const queryStart = head.url.indexOf('?');
  return ADMIT_ROUTE.test(queryStart === -1 ? head.url : head.url.slice(0, queryStart));
}

/** The request head of a Node request. */
function requestHead(request: IncomingMessage): RequestHead {
  return {
    method: request.method ?? 'GET',
    url: request.url ?? '/',
    httpVersion: request.httpVersion,
    headers: request.headers,
    sourceIp: request.socket.remoteAddress ?? '',
  };
}

/** Writes a structured result as API Gateway would: status (default 200), headers, body decoded when base64. */
function writeHttpApiResult(response: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  const body =
    result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  if (result.cookies !== undefined && result.cookies.length > 0) headers['set-cookie'] = [...result.cookies];
  headers['content-length'] = String(body.length);
  response.writeHead(result.statusCode ?? 200, headers);
  response.end(body);
}

export { toHttpApiEvent, requestHead, isAdmissionRoute, writeHttpApiResult };
