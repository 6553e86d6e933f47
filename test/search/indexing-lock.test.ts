/** The advisory lock that picks the one instance indexing a shared index, on the PostgreSQL server. */
import { afterAll, describe, expect, it } from 'vitest'
import { followIndexingLock, type IndexingLock } from '../../src/postgres-search/index.js'
import { freshPostgresSchema, storeDialects } from '../stores/each-store.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!

describe.skipIf(postgres.skipReason !== null)('the indexing lock', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  async function lockOn(connectionString: string) {
    const events: string[] = []
    const lock: IndexingLock = await followIndexingLock({ connectionString, onAcquired: () => events.push('acquired'), onLost: () => events.push('lost'), checkEveryMs: 100 })
    cleanups.push(() => lock.close())
    return { lock, events }
  }

  it('goes to one instance of a schema, to the next when that one lets go, and to one of every other schema at once', async () => {
    const [shared, other] = await Promise.all([freshPostgresSchema(), freshPostgresSchema()])
    cleanups.push(shared.drop, other.drop)
    const first = await lockOn(shared.url)
    const second = await lockOn(shared.url)
    const elsewhere = await lockOn(other.url)
    expect([first.lock.held(), second.lock.held(), elsewhere.lock.held()]).toEqual([true, false, true])

    await first.lock.close()
    await expect.poll(() => second.lock.held(), { timeout: 5000 }).toBe(true)
    expect([first.events, second.events]).toEqual([['acquired'], ['acquired']])
  })
})
