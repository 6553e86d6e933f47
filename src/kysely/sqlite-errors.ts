/** SQLITE_BUSY and SQLITE_LOCKED, the primary result codes (extended ones carry them in the low byte). */
const LOCKED_OUT = new Set([5, 6])

/**
 * Whether `error` says another connection held the database past the busy timeout (in WAL mode a
 * write waits for the writer before it; a read waits for nothing in practice): better-sqlite3
 * names the code (`SQLITE_BUSY`, `SQLITE_BUSY_SNAPSHOT`, `SQLITE_LOCKED`…), node:sqlite numbers it
 * (`errcode`).
 */
export function isLockedOut(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const { code, errcode } = error as { code?: unknown; errcode?: unknown }
  if (typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code)) return true
  return typeof errcode === 'number' && LOCKED_OUT.has(errcode & 0xff)
}
