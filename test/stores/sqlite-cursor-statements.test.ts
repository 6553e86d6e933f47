/**
 * The SQLite store binds a keyset cursor as `+?`, a value its planner does not read. With a bare `?`
 * compared to an indexed column, SQLite (built with STAT4, as better-sqlite3 is, once `pragma
 * optimize` has gathered statistics) prepares the statement anew each time a value is bound: every
 * page after the first, every `hasMore` probe and every window paid a parse and a plan (bench/README.md).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { fillResourceTemplate } from '../../src/contract/resource-json.js'
import { entityTemplate } from '../../src/http/documents.js'
import { parseGffs } from '../../src/gffs/parse.js'
import { createSqliteStore, type KyselyStore } from '../../src/kysely/index.js'

let directory: string
let store: KyselyStore

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'er-sqlite-cursor-'))
  store = await createSqliteStore({ file: join(directory, 'registry.sqlite') })
  await store.warehouse.apply(['a', 'b', 'c', 'd'].map((id) => ({ op: 'upsert' as const, record: { id, type: 'person', title: `Person ${id}`, jurisdiction: 'US-WA' } })))
})

afterEach(async () => {
  vi.restoreAllMocks()
  await store.close()
  await rm(directory, { recursive: true, force: true })
})

it('compares the id with a keyset cursor the planner does not read, and pages as before', async () => {
  const prepared = vi.spyOn(Database.prototype, 'prepare')
  const paged: string[][] = []
  for (const filter of ['', 'jurisdiction:US-WA', 'title:~person']) {
    const { qualifiers } = parseGffs(filter, { allowFreeText: false })
    for (const joined of [false, true]) {
      const ids: string[] = []
      let after: string | null = null
      do {
        const page = await store.listEntities({ qualifiers, after, limit: 1, joined })
        const resources = page.joinedResources === undefined ? page.entities.map(entityTemplate) : [new TextDecoder().decode(page.joinedResources as Uint8Array)]
        ids.push(...resources.filter((resource) => resource !== '').map((resource) => (JSON.parse(fillResourceTemplate(resource, '')) as { id: string }).id))
        after = page.hasMore ? page.cursor! : null
      } while (after !== null)
      paged.push(ids)
    }
  }
  expect(paged).toEqual(Array.from({ length: 6 }, () => ['a', 'b', 'c', 'd']))
  const statements = prepared.mock.calls.map(([text]) => text)
  // The page after a cursor, the hasMore probe, a filtered window and its page: each compares with `+?`.
  expect(statements.filter((text) => /"id" (>|<=) \+\?/.test(text)).length).toBeGreaterThanOrEqual(3)
  expect(statements.filter((text) => /"id" (>|<=) \?/.test(text))).toEqual([])
})
