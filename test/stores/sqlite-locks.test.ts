/**
 * Another connection holding the SQLite database past the busy timeout: a write fails as the store
 * being unavailable (a 503), within the bound, and works again once the lock is gone. Reads never
 * wait in WAL mode (tried: a connection cannot take exclusive locking mode while the store has the
 * file open), so the write path is the one a lock holds up; a read that fails so all the same (the
 * fault injected) is answered as a write is, whichever way the store runs it.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createSqliteStore, type KyselyStore } from '../../src/kysely/index.js'
import { createRegistry } from '../../src/registry.js'
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

describe('a SQLite store whose read is locked out', () => {
  it('answers every kind of read 503 store_unavailable with Retry-After, the fast reads and those through Kysely alike', async () => {
    await store.warehouse.apply([{ op: 'upsert', record: { id: 'b', type: 'person' } }, { op: 'upsert', record: { id: 'c', type: 'person', name: 'Carol' } }, { op: 'merge', id: 'b', into: 'c' }])
    const registry = createRegistry({ store, auth: createApiKeyAuthenticator({ keys: ['key'] }) })
    const answer = (path: string) => registry.answer({ method: 'GET', url: `http://registry.local${path}`, headers: new Headers({ Authorization: 'Bearer key' }) })
    // The driver's statements (better-sqlite3's, or node:sqlite's on Node 24 and later), each run the store makes.
    const statements = Number(process.versions.node.split('.')[0]) >= 24 ? (await import('node:sqlite')).StatementSync.prototype : Object.getPrototypeOf(other.prepare('select 1'))
    const paths = ['/v1/entities/a', '/v1/entities/b', '/v1/entities?page[limit]=10', `/v1/entities?filter=${encodeURIComponent('type:person name:~carol')}`, '/v1/facets?fields=type', '/v1/entities/changes?filter=type:person']
    for (const path of paths) {
      const lockedOut = vi.spyOn(statements, 'all').mockImplementationOnce(() => {
        throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY', errcode: 5 })
      })
      const away = await answer(path)
      expect(lockedOut, path).toHaveBeenCalled()
      lockedOut.mockRestore()
      expect([path, away.status, JSON.parse(String(away.body)).errors[0].code, away.headers['Retry-After']]).toEqual([path, 503, 'store_unavailable', '1'])
      expect([path, (await answer(path)).status]).toEqual([path, 200])
    }
  })
})

describe('isLockedOut', () => {
  const sqliteError = (fields: object) => Object.assign(new Error('database is locked'), fields)
  it('knows better-sqlite3 codes and node:sqlite numbers, extended ones too', () => {
    expect([{ code: 'SQLITE_BUSY' }, { code: 'SQLITE_BUSY_SNAPSHOT' }, { code: 'SQLITE_LOCKED' }, { errcode: 5 }, { errcode: 517 }, { errcode: 6 }].map((fields) => isLockedOut(sqliteError(fields)))).toEqual([true, true, true, true, true, true])
    expect([{ code: 'SQLITE_CONSTRAINT' }, { errcode: 19 }, {}].map((fields) => isLockedOut(sqliteError(fields)))).toEqual([false, false, false])
  })
})
