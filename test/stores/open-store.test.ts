import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, sql, SqliteDialect } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createKyselyStore, createSqliteStore, openStore, type KyselyStore } from '../../src/kysely/index.js'
import { freshPostgresSchema, sqlDialects } from './each-store.js'

let directory: string
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'er-open-'))
})
afterEach(() => rm(directory, { recursive: true, force: true }))

/** Writes an entity, closes the store, and reads it back from a store opened the same way. */
async function expectPersistence(open: () => Promise<KyselyStore>): Promise<void> {
  const first = await open()
  await first.warehouse.upsert({ id: 'a', type: 'person' })
  await first.close()
  const second = await open()
  try {
    expect((await second.getEntity('a'))?.snapshot).toEqual({ texts: [], type: 'person' })
    expect(await second.feedHead()).not.toBeNull()
  } finally {
    await second.close()
  }
}

async function serverVersion(store: KyselyStore): Promise<string> {
  const { rows } = await sql<{ version: string }>`select version() as version`.execute(store.db)
  return rows[0]!.version
}

describe('createSqliteStore', () => {
  it('keeps its data in the file, in WAL mode', async () => {
    const file = join(directory, 'registry.sqlite')
    await expectPersistence(() => createSqliteStore({ file }))
    const store = await createSqliteStore({ file })
    try {
      const pragma = async (name: string) =>
        Object.values((await sql.raw(`pragma ${name}`).execute(store.db)).rows[0] as object)[0]
      expect([await pragma('journal_mode'), await pragma('busy_timeout'), await pragma('synchronous')]).toEqual([
        'wal',
        3000,
        1,
      ])
    } finally {
      await store.close()
    }
  })

  it('opens in memory', async () => {
    const store = await createSqliteStore({ file: ':memory:' })
    await store.warehouse.upsert({ id: 'a', type: 'person' })
    expect((await store.listEntities({ qualifiers: [], after: null, limit: 10 })).entities).toHaveLength(1)
    await store.close()
  })

  it('refuses a connection without the store functions, naming the fix', async () => {
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) })
    await expect(createKyselyStore({ db, dialect: 'sqlite' })).rejects.toThrow(/registerSqliteFunctions/)
    await db.destroy()
  })
})

describe('openStore', () => {
  it('opens a SQLite file for a path', async () => {
    const store = await openStore(join(directory, 'registry.sqlite'))
    const { rows } = await sql<{ version: string }>`select sqlite_version() as version`.execute(store.db)
    expect(rows[0]?.version).toMatch(/^3\./)
    await store.close()
  })

  it('opens PGlite in memory for "pglite:"', async () => {
    const store = await openStore('pglite:')
    expect(await serverVersion(store)).toContain('PGlite')
    await store.close()
  })

  it('opens PGlite keeping its data in the directory of "pglite://path"', async () => {
    await expectPersistence(() => openStore(`pglite://${join(directory, 'pglite')}`))
    // PGlite's first open of a directory runs initdb in WebAssembly: 10 s alone, over 30 on a busy machine.
  }, 120_000)

  const postgres = sqlDialects.find((dialect) => dialect.name === 'postgres')!
  it.skipIf(postgres.skipReason !== null)('opens PostgreSQL for a postgres:// URL', async () => {
    const schema = await freshPostgresSchema()
    const store = await openStore(schema.url)
    try {
      expect(await serverVersion(store)).toMatch(/^PostgreSQL/)
      expect(await store.feedHead()).toBeNull()
    } finally {
      await store.close()
      await schema.drop()
    }
  })
})

it('refuses a database URL of a scheme it does not know, rather than making a SQLite file of that name', async () => {
  await expect(openStore('mysql://root@localhost/db')).rejects.toThrow('unsupported database "mysql://"')
  expect(existsSync('mysql:')).toBe(false)
})

it('refuses a replica to read from beside a database other than PostgreSQL, or one that is no postgres:// URL, opening nothing', async () => {
  const message = 'a replica to read from needs a PostgreSQL database and a postgres:// replica of it'
  await expect(openStore('pglite:', { readFrom: 'postgres://replica/db' })).rejects.toThrow(message)
  await expect(openStore('postgres://primary/db', { readFrom: 'replica.sqlite' })).rejects.toThrow(message)
  expect(existsSync('replica.sqlite')).toBe(false)
})
