import { DependencyUnavailableError } from '../ports/dependency.js'
import { isConnectionFailure, isRecoveryConflict } from './postgres-errors.js'
import { isLockedOut } from './sqlite-errors.js'

/**
 * `error` as the registry answers it, whichever path ran the statement (a query shape's direct
 * read, Kysely's query, a write transaction, the search index's or the key store's statements): the
 * database away (PostgreSQL's connection failures) or held by another connection past the busy
 * timeout (SQLite), or a replica that cancelled a read to replay the primary's changes, is the store's 503; anything else stays as it is. Each driver applies it where
 * every statement of its runs: the PostgreSQL store's pool (postgres.ts), the SQLite store's
 * statement cache (sqlite.ts). The message names no host or port (it reaches clients); the cause
 * keeps them.
 */
export function asStoreError(error: unknown): unknown {
  if (isConnectionFailure(error)) return new DependencyUnavailableError('store', 'the database is unavailable', 1, { cause: error })
  if (isRecoveryConflict(error)) return new DependencyUnavailableError('store', 'the replica cancelled the read to replay changes', 1, { cause: error })
  if (isLockedOut(error)) return new DependencyUnavailableError('store', 'the database is locked by another connection', 1, { cause: error })
  return error
}

/**
 * The store's 503 for `error`, if it ended a statement's wait for a connection of a pool whose
 * `size` connections stayed busy (`pg`'s pool gave up at its connection timeout): a bounded wait,
 * never a queue without end. Null for any other error (`asStoreError` answers it).
 */
export function poolBusyError(error: unknown, size: number): DependencyUnavailableError | null {
  if (!(error instanceof Error) || !/^timeout exceeded when trying to connect/.test(error.message)) return null
  return new DependencyUnavailableError('store', `all ${size} connections of the pool to the database stayed busy`, 1, { cause: error })
}
