/**
 * Every store a suite can run against: `describeEachStore` repeats a suite for each one and `useStore`
 * gives each test a fresh, empty store. PostgreSQL runs when its server answers (ER_TEST_POSTGRES_URL,
 * default the project's local server) and is skipped with the reason otherwise, unless
 * ER_REQUIRE_POSTGRES=1 makes it fail instead.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PGliteDialect } from 'kysely'
import pg from 'pg'
import { afterEach, beforeEach, describe } from 'vitest'
import { createKyselyStore, createPostgresStore, createSqliteStore, type KyselyStore, type StoreTuning } from '../../src/kysely/index.js'
import { createMemoryStore } from '../../src/memory/index.js'
import type { RegistryStore } from '../../src/ports/store.js'
import { withPostgresClient } from '../support/postgres-client.js'

export type TestStore = RegistryStore

export type TestDialectName = 'memory' | 'sqlite' | 'pglite' | 'postgres'

export interface StoreDialect<S extends TestStore = TestStore> {
  name: TestDialectName
  /** Why this dialect's suites are skipped on this machine, or null when they run. */
  skipReason: string | null
  /** A fresh, empty store (the memory store has no tuning). */
  open(tuning?: StoreTuning): Promise<S>
}

export const POSTGRES_URL = process.env.ER_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** The dialects a run keeps (`ER_TEST_STORES=sqlite,postgres`), all by default: a run on another Node
 * line leaves out those that do not depend on it. */
const KEPT_STORES = process.env.ER_TEST_STORES?.split(',').map((name) => name.trim())
const leftOut = (name: TestDialectName) => (KEPT_STORES === undefined || KEPT_STORES.includes(name) ? null : `left out by ER_TEST_STORES=${KEPT_STORES.join(',')}`)

const memory: StoreDialect = {
  name: 'memory',
  skipReason: leftOut('memory'),
  open: async () => createMemoryStore(),
}

const sqlite: StoreDialect<KyselyStore> = {
  name: 'sqlite',
  skipReason: leftOut('sqlite'),
  async open(tuning) {
    const directory = await mkdtemp(join(tmpdir(), 'er-kysely-'))
    const store = await createSqliteStore({ ...tuning, file: join(directory, 'registry.sqlite') })
    const close = async () => {
      await store.close()
      await rm(directory, { recursive: true, force: true })
    }
    return { ...store, close }
  },
}

/**
 * PGlite takes about two seconds to start, so one instance per test file holds a fresh schema per
 * store. Its single session shares `search_path`: keep one PGlite store open at a time.
 */
let sharedPglite: PGlite | undefined
const pglite: StoreDialect<KyselyStore> = {
  name: 'pglite',
  skipReason: leftOut('pglite'),
  async open(tuning) {
    sharedPglite ??= new PGlite()
    const instance = sharedPglite
    const schema = freshSchemaName()
    await instance.exec(`create schema ${schema}; set search_path to ${schema}`)
    // Not store.close(): destroying the Kysely instance would close the shared PGlite.
    const store = await createKyselyStore({
      ...tuning,
      db: new Kysely({ dialect: new PGliteDialect({ pglite: instance }) }),
      dialect: 'postgres',
    })
    const close = async () => {
      await instance.exec(`drop schema ${schema} cascade; set search_path to public`)
    }
    return { ...store, close }
  },
}

const postgres: StoreDialect<KyselyStore> = {
  name: 'postgres',
  skipReason: leftOut('postgres') ?? (process.env.ER_REQUIRE_POSTGRES === '1' ? null : await postgresUnreachable()),
  async open(tuning) {
    const schema = await freshPostgresSchema()
    const store = await createPostgresStore({ ...tuning, pool: new pg.Pool({ connectionString: schema.url }) })
    const close = async () => {
      await store.close()
      await schema.drop()
    }
    return { ...store, close }
  },
}

export const storeDialects: readonly StoreDialect[] = [memory, sqlite, pglite, postgres]
export const sqlDialects: readonly StoreDialect<KyselyStore>[] = [sqlite, pglite, postgres]

/** Repeats a suite for each dialect; a skipped one says why in its title. */
export function describeEachStore<S extends TestStore>(
  dialects: readonly StoreDialect<S>[],
  title: string,
  suite: (dialect: StoreDialect<S>) => void,
): void {
  for (const dialect of dialects) {
    if (dialect.skipReason === null) describe(`${title} [${dialect.name}]`, () => suite(dialect))
    else describe.skip(`${title} [${dialect.name}] skipped: ${dialect.skipReason}`, () => suite(dialect))
  }
}

/** A fresh store for each test of the enclosing suite, closed after it. */
export function useStore<S extends TestStore>(dialect: StoreDialect<S>): () => S {
  let store: S | undefined
  beforeEach(async () => {
    store = await dialect.open()
  })
  afterEach(async () => {
    await store?.close()
    store = undefined
  })
  return () => {
    if (store === undefined) throw new Error('useStore: the store exists only inside a test')
    return store
  }
}

/** A new, empty schema on the test server, and a URL whose connections use it. */
export async function freshPostgresSchema(): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = freshSchemaName()
  await withAdminClient((client) => client.query(`create schema ${schema}`))
  const url = new URL(POSTGRES_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: url.href,
    drop: () => withAdminClient((client) => client.query(`drop schema ${schema} cascade`)).then(() => undefined),
  }
}

function freshSchemaName(): string {
  return `er_test_${randomBytes(6).toString('hex')}`
}

function withAdminClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  return withPostgresClient(POSTGRES_URL, work)
}

async function postgresUnreachable(): Promise<string | null> {
  try {
    await withAdminClient((client) => client.query('select 1'))
    return null
  } catch (error) {
    return `PostgreSQL at ${POSTGRES_URL} is unreachable (${
      error instanceof Error ? error.message : String(error)
    }); set ER_REQUIRE_POSTGRES=1 to fail instead`
  }
}
