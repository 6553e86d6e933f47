/**
 * Socket errors of a server that is down, restarting or unreachable; over a Unix socket
 * (`?host=/var/run/postgresql`), ENOENT: a stopped server removes its socket's file.
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENOENT'])

/** Admin shutdown, crash shutdown, cannot connect now (starting or stopping), too many connections. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])

/** What `pg` and `pg-pool` say, without a code, of a connection lost or never made. */
const CONNECTION_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect/, /^Client has encountered a connection error and is not queryable/]

/** Whether `error` says the server is away (and a retry later may succeed), not that the query is wrong. */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08'))) return true
  if (CONNECTION_MESSAGES.some((pattern) => pattern.test(error.message))) return true
  // Node's connect errors to several addresses (localhost's ::1 and 127.0.0.1) come as one AggregateError.
  return error instanceof AggregateError && error.errors.length > 0 && error.errors.every(isConnectionFailure)
}

/**
 * Whether a hot standby cancelled the statement to replay the primary's changes (a replica the
 * reads go to, `readFrom`): SQLSTATE 40001 "conflict with recovery". The same read may succeed
 * when retried.
 */
export function isRecoveryConflict(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === '40001' && /conflict with recovery/.test(error.message)
}
