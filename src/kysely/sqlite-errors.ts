import { DependencyUnavailableError } from '../ports/dependency.js'

/** SQLITE_BUSY and SQLITE_LOCKED, the primary result codes (extended ones carry them in the low byte). */
const LOCKED_OUT = new Set([5, 6])

/**
 * Whether `error` says another connection held the database past the busy timeout: better-sqlite3
 * names the code (`SQLITE_BUSY`, `SQLITE_BUSY_SNAPSHOT`, `SQLITE_LOCKED`…), node:sqlite numbers it
 * (`errcode`).
 */
export function isLockedOut(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const { code, errcode } = error as { code?: unknown; errcode?: unknown }
  if (typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code)) return true
  return typeof errcode === 'number' && LOCKED_OUT.has(errcode & 0xff)
}

/**
 * A failed write as the store reports it: a database another connection held past the busy timeout
 * is the store away (a 503). Only writes wait for a lock (in WAL mode reads never do), so it is
 * looked for where a write transaction fails, not around every statement: a wrapped statement cost
 * a list page about a sixth of its time (test/perf/page-cost.test.ts).
 */
export function lockedOutAsUnavailable(error: unknown): unknown {
  return isLockedOut(error) ? new DependencyUnavailableError('store', 'the database is locked by another connection', 1, { cause: error }) : error
}
