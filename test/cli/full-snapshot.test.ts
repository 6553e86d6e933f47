// `import --full` as a user runs it, on SQLite and PostgreSQL: a file, and gzip piped in.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openStore } from '../../src/kysely/index.js'
import { describeEachStore, freshPostgresSchema, storeDialects } from '../stores/each-store.js'
import { CLI } from '../support/cli.js'

const dialects = storeDialects.filter((dialect) => dialect.name === 'sqlite' || dialect.name === 'postgres')
const ids = Array.from({ length: 200 }, (_, i) => `p${String(i).padStart(3, '0')}`)

describeEachStore(dialects, 'import --full', (dialect) => {
  const dir = mkdtempSync(join(tmpdir(), 'er-cli-full-'))
  let database = join(dir, 'registry.sqlite')
  let dropSchema = async () => {}
  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('dist/cli/main.js is missing: run `npm run build` (npm test does)')
    if (dialect.name !== 'postgres') return
    const schema = await freshPostgresSchema()
    database = schema.url
    dropSchema = schema.drop
  })
  afterAll(() => dropSchema())
  const snapshot = (name: string, kept: string[]) => {
    const file = join(dir, name)
    writeFileSync(file, kept.map((id) => JSON.stringify({ id, type: 'person', name: `Person ${id}` })).join('\n'))
    return file
  }
  const run = (args: string[]) => {
    const result = spawnSync(process.execPath, [CLI, 'import', ...args, '--database', database, '--data', join(dir, 'data')], { encoding: 'utf8' })
    return [result.status, result.stdout, result.stderr]
  }
  const canonical = async () => {
    const store = await openStore(database)
    try {
      return (await store.listEntities({ qualifiers: [], after: null, limit: 1000 })).entities.map((entity) => entity.id)
    } finally {
      await store.close()
    }
  }

  it('deletes what a snapshot lacks (5%), refuses one that lacks 20% with nothing changed, and takes it with --max-delete', async () => {
    expect(run([snapshot('all.ndjson', ids), '--full'])).toEqual([0, 'applied 200, unchanged 0, rejected 0, deleted 0 not in the snapshot\n', ''])
    const lacking20 = snapshot('lacking20.ndjson', ids.slice(40))
    expect(run([lacking20, '--full'])).toEqual([2, '', 'import --full: a full snapshot would delete 40 of 200 entities, more than the limit (10%, 20 entities); nothing changed\n'])
    expect(run([lacking20, '--full', '--max-delete', '39'])[0]).toBe(2)
    expect(await canonical()).toEqual(ids)

    // Through a real pipe, gzip-compressed: standard input is read twice by way of a temporary file.
    snapshot('lacking5.ndjson', ids.slice(10))
    const command = `gzip -c lacking5.ndjson | '${process.execPath}' '${CLI}' import - --full --database '${database}' --data data`
    const piped = spawnSync('sh', ['-c', command], { cwd: dir, encoding: 'utf8' })
    expect([piped.status, piped.stdout, piped.stderr]).toEqual([0, 'applied 0, unchanged 190, rejected 0, deleted 10 not in the snapshot\n', ''])
    expect(await canonical()).toEqual(ids.slice(10))

    // 30 of 190 (16%) lacking.
    expect(run([lacking20, '--full', '--max-delete', '15%'])[0]).toBe(2)
    expect(run([lacking20, '--full', '--max-delete', '15.8%'])).toEqual([0, 'applied 0, unchanged 160, rejected 0, deleted 30 not in the snapshot\n', ''])
    expect(await canonical()).toEqual(ids.slice(40))
    expect(run([snapshot('lacking-more.ndjson', ids.slice(100)), '--full', '--max-delete', '60'])).toEqual([0, 'applied 0, unchanged 100, rejected 0, deleted 60 not in the snapshot\n', ''])
  })
})
