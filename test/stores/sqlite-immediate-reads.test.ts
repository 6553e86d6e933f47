/**
 * The SQLite store runs a read as a statement at once while no query or transaction holds its one
 * connection, and through Kysely, in turn, while one does: a read never sees a transaction's
 * uncommitted writes, and a closed store fails reads as before.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createSqliteStore, type KyselyStore } from '../../src/kysely/index.js'

let directory: string
let store: KyselyStore

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'er-sqlite-reads-'))
  store = await createSqliteStore({ file: join(directory, 'registry.sqlite') })
  await store.warehouse.upsert({ id: 'a', type: 'person', title: 'Before' })
})

afterEach(async () => {
  await store.close()
  await rm(directory, { recursive: true, force: true })
})

describe('reads of a SQLite store', () => {
  it('run at once, outside Kysely, while the connection is free', async () => {
    const viaKysely = vi.spyOn(store.db, 'executeQuery')
    expect((await store.getEntity('a'))?.snapshot.title).toBe('Before')
    expect((await store.listEntities({ qualifiers: [], after: null, limit: 10, joined: true })).hasMore).toBe(false)
    expect(viaKysely).not.toHaveBeenCalled()
  })

  it('wait for an open transaction and never see its uncommitted writes', async () => {
    let finish!: () => void
    const held = new Promise<void>((resolve) => (finish = resolve))
    let began!: () => void
    const begun = new Promise<void>((resolve) => (began = resolve))
    const transaction = store.db.connection().execute(async (connection) => {
      await sql`begin`.execute(connection)
      await sql`update entities set resource = null, snapshot = ${JSON.stringify({ type: 'person', title: 'Uncommitted', texts: [] })} where id = 'a'`.execute(connection)
      began()
      await held
      await sql`rollback`.execute(connection)
    })
    await begun
    let read: string | undefined
    const reading = store.getEntity('a').then((entity) => (read = entity?.snapshot.title))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(read).toBeUndefined()
    finish()
    await Promise.all([transaction, reading])
    expect(read).toBe('Before')
  })

  it('fail once the store is closed', async () => {
    await store.close()
    await expect(store.getEntity('a')).rejects.toThrow(/destroyed/)
    store = await createSqliteStore({ file: join(directory, 'registry.sqlite') })
  })
})
