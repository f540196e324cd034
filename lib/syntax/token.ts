/**
 * The form of the webhook's path token, shared by the endpoint that checks it and the configuration that carries it,
 * so a token one accepts the other never refuses.
 */

/**
 * 32 to 256 characters of the base64url alphabet: safe in a URL path without encoding, and no "." so that no client
 * can read it as a dot segment. 32 hex characters carry 128 bits, the minimum; a generated token is 43 (32 bytes).
 */
const WEBHOOK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{32,256}$/;

/** The form in words, for error messages (which never repeat the token itself). */
const WEBHOOK_TOKEN_FORM = '32 to 256 characters from A-Z, a-z, 0-9, "-" and "_"';

export { WEBHOOK_TOKEN_PATTERN, WEBHOOK_TOKEN_FORM };
