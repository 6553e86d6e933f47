// Imports as processes run them (the built CLI): concurrent importers under a tailing reader, and an
// importer killed with SIGKILL mid-way. Each batch is one transaction written at its end in a few
// statements; these check that the feed and the table still agree whatever happens around them.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPostgresStore, createSqliteStore, type KyselyStore } from '../../src/kysely/index.js'
import { CLI } from '../support/cli.js'
import { freshPostgresSchema, storeDialects } from '../stores/each-store.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Database {
  /** `import` options that reach it. */
  args: string[]
  open(): Promise<KyselyStore>
  drop(): Promise<void>
}

async function sqliteDatabase(): Promise<Database> {
  const data = mkdtempSync(join(tmpdir(), 'er-import-processes-'))
  return { args: ['--data', data], open: () => createSqliteStore({ file: join(data, 'registry.sqlite') }), drop: async () => {} }
}

async function postgresDatabase(): Promise<Database> {
  const schema = await freshPostgresSchema()
  const data = mkdtempSync(join(tmpdir(), 'er-import-processes-'))
  return { args: ['--data', data, '--database', schema.url], open: () => createPostgresStore({ connectionString: schema.url }), drop: schema.drop }
}

/** An NDJSON file of `count` persons `<prefix>00000…`. */
function personsFile(prefix: string, count: number): string {
  const file = join(mkdtempSync(join(tmpdir(), 'er-import-processes-')), `${prefix}.ndjson`)
  writeFileSync(file, Array.from({ length: count }, (_, index) => JSON.stringify({ id: `${prefix}${String(index).padStart(5, '0')}`, type: 'person', name: `${prefix} ${index}` })).join('\n'))
  return file
}

function startImport(file: string, args: string[]) {
  const child = spawn(process.execPath, [CLI, 'import', file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, output })),
  )
  return { child, exited }
}

/** The feed's entity ids in feed order, and the ids of the entities table. */
async function feedAndTable(store: KyselyStore): Promise<{ feed: string[]; seqs: number[]; table: string[] }> {
  const changes = await store.db.selectFrom('changes').select(['seq', 'entity_id']).orderBy('seq').execute()
  const entities = await store.db.selectFrom('entities').select('id').orderBy('id').execute()
  return { feed: changes.map((row) => row.entity_id), seqs: changes.map((row) => Number(row.seq)), table: entities.map((row) => row.id) }
}

const kinds = [
  { name: 'sqlite', skipReason: null, database: sqliteDatabase },
  { name: 'postgres', skipReason: storeDialects.find((dialect) => dialect.name === 'postgres')!.skipReason, database: postgresDatabase },
]

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error('dist/cli/main.js is missing: run `npm run build` (npm test does)')
})

for (const kind of kinds) {
  describe.skipIf(kind.skipReason !== null)(`import processes on ${kind.name}${kind.skipReason ? ` (skipped: ${kind.skipReason})` : ''}`, () => {
    it('gives a reader tailing two concurrent importers every change once, in order', async () => {
      const database = await kind.database()
      const reader = await database.open()
      try {
        const importers = ['ia', 'ib'].map((prefix) => startImport(personsFile(prefix, 3000), [...database.args, '--batch', '250']))
        let done = false
        void Promise.all(importers.map((importer) => importer.exited)).finally(() => (done = true))
        const seen: { changeId: string; entityId: string }[] = []
        let cursor: string | null = null
        while (!done) {
          const page = await reader.listChanges({ qualifiers: [], after: cursor, limit: 500, window: 500 })
          seen.push(...page.changes)
          cursor = page.cursor
          if (!page.hasMore) await sleep(5)
        }
        for (const { code, output } of await Promise.all(importers.map((importer) => importer.exited))) expect(code, output).toBe(0)
        for (let more = true; more; ) {
          const page = await reader.listChanges({ qualifiers: [], after: cursor, limit: 500, window: 500 })
          seen.push(...page.changes)
          cursor = page.cursor
          more = page.hasMore
        }
        expect(seen).toHaveLength(6000)
        const ids = seen.map((change) => change.changeId)
        expect(ids).toEqual([...new Set(ids)].sort())
        for (const prefix of ['ia', 'ib']) {
          expect(seen.filter((change) => change.entityId.startsWith(prefix)).map((change) => change.entityId)).toEqual(
            Array.from({ length: 3000 }, (_, index) => `${prefix}${String(index).padStart(5, '0')}`),
          )
        }
        const { feed, table } = await feedAndTable(reader)
        expect([...feed].sort()).toEqual(table)
      } finally {
        await reader.close()
        await database.drop()
      }
    })

    it('leaves whole batches, each entity with its one change, when the importer is killed; the rerun applies the rest', async () => {
      const database = await kind.database()
      const file = personsFile('k', 12_000)
      const store = await database.open()
      try {
        const importer = startImport(file, [...database.args, '--batch', '500'])
        // Killed once some batches have committed, in the middle of the rest.
        while ((await store.feedHead()) === null) await sleep(10)
        await sleep(50)
        importer.child.kill('SIGKILL')
        expect((await importer.exited).signal).toBe('SIGKILL')
        const { feed, seqs, table } = await feedAndTable(store)
        expect(table.length).toBeGreaterThan(0)
        expect(table.length).toBeLessThan(12_000)
        expect(table.length % 500).toBe(0)
        expect(feed).toEqual(table)
        expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => seqs[0]! + index))
        const rerun = spawnSync(process.execPath, [CLI, 'import', file, ...database.args, '--batch', '500'], { encoding: 'utf8' })
        expect(rerun.stdout).toBe(`applied ${12_000 - table.length}, unchanged ${table.length}, rejected 0\n`)
        const after = await feedAndTable(store)
        expect(after.table).toHaveLength(12_000)
        expect(after.feed).toEqual(after.table)
      } finally {
        await store.close()
        await database.drop()
      }
    })
  })
}
