/**
 * Another connection holding the SQLite database past the busy timeout: a write fails as the store
 * being unavailable (a 503), within the bound, and works again once the lock is gone. Reads never
 * wait in WAL mode (tried: a connection cannot take exclusive locking mode while the store has the
 * file open), so the write path is the one a lock holds up.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createSqliteStore, type KyselyStore } from '../../src/kysely/index.js'
import { isLockedOut } from '../../src/kysely/sqlite-errors.js'
import { isDependencyUnavailable } from '../../src/ports/dependency.js'

let directory: string
let file: string
let store: KyselyStore
let other: Database.Database

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'er-sqlite-locks-'))
  file = join(directory, 'registry.sqlite')
  store = await createSqliteStore({ file })
  await store.warehouse.upsert({ id: 'a', type: 'person' })
  other = new Database(file)
})

afterEach(async () => {
  other.close()
  await store.close()
  await rm(directory, { recursive: true, force: true })
})

/** What `work` threw and how long it took. */
async function failure(work: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now()
  const error = await work().then(() => null, (thrown: unknown) => thrown)
  return { error, ms: performance.now() - started }
}

describe('a SQLite store another connection holds', () => {
  it('fails a write as the store unavailable after the busy timeout, and writes once the writer commits', async () => {
    other.exec('begin immediate')
    const { error, ms } = await failure(() => store.warehouse.upsert({ id: 'b', type: 'person' }))
    expect(isDependencyUnavailable(error) && error.dependency).toBe('store')
    expect(ms).toBeGreaterThanOrEqual(2500)
    expect(ms).toBeLessThan(5000)
    // Reads go on meanwhile: in WAL mode a writer blocks no reader.
    expect((await store.getEntity('a'))?.id).toBe('a')
    other.exec('commit')
    await store.warehouse.upsert({ id: 'b', type: 'person' })
    expect((await store.getEntity('b'))?.id).toBe('b')
  })

})

describe('isLockedOut', () => {
  const sqliteError = (fields: object) => Object.assign(new Error('database is locked'), fields)
  it('knows better-sqlite3 codes and node:sqlite numbers, extended ones too', () => {
    expect([{ code: 'SQLITE_BUSY' }, { code: 'SQLITE_BUSY_SNAPSHOT' }, { code: 'SQLITE_LOCKED' }, { errcode: 5 }, { errcode: 517 }, { errcode: 6 }].map((fields) => isLockedOut(sqliteError(fields)))).toEqual([true, true, true, true, true, true])
    expect([{ code: 'SQLITE_CONSTRAINT' }, { errcode: 19 }, {}].map((fields) => isLockedOut(sqliteError(fields)))).toEqual([false, false, false])
  })
})
