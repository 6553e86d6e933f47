import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { StoredChange } from '../../src/contract/entity.js'
import { createPostgresStore, createSqliteStore, type KyselyStore } from '../../src/kysely/index.js'
import { createKyselyWarehouseBackend } from '../../src/kysely/kysely-warehouse-backend.js'
import { resolveDialect } from '../../src/kysely/sql-dialect.js'
import { freshPostgresSchema, storeDialects } from '../stores/each-store.js'

const WRITER = fileURLToPath(new URL('../support/feed-writer.mjs', import.meta.url))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A database that several processes can open: where it is, and a way to open one more connection. */
interface SharedDatabase {
  location: string
  open(): Promise<KyselyStore>
  drop(): Promise<void>
}

async function sqliteDatabase(): Promise<SharedDatabase> {
  const file = join(mkdtempSync(join(tmpdir(), 'er-gapless-')), 'registry.sqlite')
  return { location: file, open: () => createSqliteStore({ file }), drop: async () => {} }
}

async function postgresDatabase(): Promise<SharedDatabase> {
  const schema = await freshPostgresSchema()
  return { location: schema.url, open: () => createPostgresStore({ connectionString: schema.url }), drop: schema.drop }
}

function startWriter(location: string, prefix: string, count: number): Promise<void> {
  const child = spawn(process.execPath, [WRITER, location, prefix, String(count)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${prefix} failed: ${output}`)))),
  )
}

/** Reads every change after `cursor` that is visible now, in small windows, as a client would. */
async function readNew(store: KyselyStore, cursor: string | null): Promise<{ changes: StoredChange[]; cursor: string | null }> {
  const changes: StoredChange[] = []
  for (;;) {
    const page = await store.listChanges({ qualifiers: [], after: cursor, limit: 10, window: 37 })
    changes.push(...page.changes)
    cursor = page.cursor
    if (!page.hasMore) return { changes, cursor }
  }
}

const sqlStores = [
  { name: 'sqlite', skipReason: null, database: sqliteDatabase },
  { name: 'postgres', skipReason: storeDialects.find((d) => d.name === 'postgres')!.skipReason, database: postgresDatabase },
]

for (const kind of sqlStores) {
  describe.skipIf(kind.skipReason !== null)(`gapless change feed on ${kind.name}${kind.skipReason ? ` (skipped: ${kind.skipReason})` : ''}`, () => {
    it('shows no later change while an earlier write is still open, then both in order', async () => {
      const database = await kind.database()
      const [holder, reader] = [await database.open(), await database.open()]
      try {
        const backend = createKyselyWarehouseBackend(holder.db, await resolveDialect(holder.db, kind.name as 'sqlite' | 'postgres'))
        let appended!: () => void
        const appendedOnce = new Promise<void>((resolve) => (appended = resolve))
        let open = true
        // Writer A appends a change and keeps its transaction open for a while.
        const slowWrite = backend.transaction(async (tx) => {
          await tx.appendChange({ entityId: 'slow', changeType: 'create', changedKeys: ['type'], mergedInto: null, recordedAt: new Date().toISOString(), snapshot: { type: 'person', texts: [] }, previousSnapshot: { texts: [] } })
          appended()
          await sleep(1500)
          open = false
        })
        await appendedOnce
        // Writer B, another process, writes meanwhile; it must not become visible before A.
        const fastWrite = startWriter(database.location, 'fast', 1)
        let seenWhileOpen: StoredChange[] = []
        let pollsWhileOpen = 0
        for (let poll = 0; poll < 10; poll++) {
          await sleep(100)
          const { changes } = await readNew(reader, null)
          // Counted only if A was still open once the read was answered (on a busy machine the
          // polls outlast A's 1.5 s, and then both are rightly there).
          if (!open) break
          pollsWhileOpen++
          seenWhileOpen = seenWhileOpen.concat(changes)
        }
        expect(pollsWhileOpen).toBeGreaterThan(2)
        expect(seenWhileOpen).toEqual([])
        await slowWrite
        await fastWrite
        const { changes } = await readNew(reader, null)
        expect(changes.map((change) => change.entityId)).toEqual(['slow', 'fast00000'])
      } finally {
        await holder.close()
        await reader.close()
        await database.drop()
      }
    })

    // Four writer processes and a reader: on a machine busy with other suites it took over 30 s.
    it('delivers every change exactly once, in order, to a reader tailing four concurrent writer processes', { timeout: 120_000 }, async () => {
      const database = await kind.database()
      const reader = await database.open()
      try {
        const writers = ['wa', 'wb', 'wc', 'wd'].map((prefix) => startWriter(database.location, prefix, 250))
        let done = false
        void Promise.all(writers).finally(() => (done = true))
        const read: StoredChange[] = []
        let cursor: string | null = null
        // Polls that found something while the writers were still writing: the reader really tailed them.
        let pollsWithChanges = 0
        while (!done) {
          const batch = await readNew(reader, cursor)
          read.push(...batch.changes)
          cursor = batch.cursor
          if (batch.changes.length > 0 && !done) pollsWithChanges++
          await sleep(5)
        }
        await Promise.all(writers)
        read.push(...(await readNew(reader, cursor)).changes)

        expect(pollsWithChanges).toBeGreaterThan(2)
        expect(read).toHaveLength(1000)
        const ids = read.map((change) => change.changeId)
        expect(new Set(ids).size).toBe(1000)
        expect(ids).toEqual([...ids].sort())
        for (const prefix of ['wa', 'wb', 'wc', 'wd']) {
          const own = read.filter((change) => change.entityId.startsWith(prefix)).map((change) => change.entityId)
          expect(own).toEqual(Array.from({ length: 250 }, (_, index) => `${prefix}${index.toString().padStart(5, '0')}`))
        }
        // Every entity the writers made is there, once: the feed and the table agree.
        const listed: string[] = []
        for (let after: string | null = null; ; ) {
          const page = await reader.listEntities({ qualifiers: [], after, limit: 100 })
          listed.push(...page.entities.map((entity) => entity.id))
          if (!page.hasMore) break
          after = page.entities.at(-1)!.id
        }
        expect(listed).toEqual(read.map((change) => change.entityId).sort())
      } finally {
        await reader.close()
        await database.drop()
      }
    })
  })
}
