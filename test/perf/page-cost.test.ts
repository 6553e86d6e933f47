/**
 * Performance smoke: the in-process cost of a list page (registry.answer over SQLite) against a
 * floor measured in the same run (one prepared better-sqlite3 statement, the stored JSON
 * concatenated), over 20,000 entities. Fails when the ratio grows more than 30% past the one
 * recorded in page-cost.baseline.json (measured on the bench machine, bench/README.md). Rounds
 * alternate the two, and the median round counts, so a busy machine slows both alike.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createSqliteStore, type KyselyStore } from '../../src/kysely/index.js'
import { createRegistry } from '../../src/registry.js'

const ENTITIES = 20_000
const ROUNDS = 9
const PER_ROUND = 150
const { listPageRatio: BASELINE } = JSON.parse(readFileSync(new URL('./page-cost.baseline.json', import.meta.url), 'utf8')) as { listPageRatio: number }

const directory = mkdtempSync(join(tmpdir(), 'er-perf-'))
let store: KyselyStore

beforeAll(async () => {
  store = await createSqliteStore({ file: join(directory, 'registry.sqlite') })
  const states = ['WA', 'OR', 'CA', 'NY', 'TX']
  for (let start = 0; start < ENTITIES; start += 2000) {
    await store.warehouse.apply(
      Array.from({ length: 2000 }, (_, offset) => {
        const n = start + offset
        const type = n % 10 < 6 ? 'person' : 'legislation'
        return { op: 'upsert' as const, record: { id: `e${n.toString(36).padStart(5, '0')}`, type, title: `${type} number ${n}`, jurisdiction: `US-${states[n % 5]}`, status: 'serving', texts: [] } }
      }),
    )
  }
}, 120_000)
afterAll(async () => {
  await store?.close()
  rmSync(directory, { recursive: true, force: true })
})

/** Mean microseconds a call over `count` calls. */
async function cost(count: number, call: () => unknown): Promise<number> {
  const started = performance.now()
  for (let index = 0; index < count; index++) await call()
  return ((performance.now() - started) * 1000) / count
}

it('a list page costs no more than 1.3 times its recorded ratio to the floor', async () => {
  const db = new Database(join(directory, 'registry.sqlite'), { readonly: true })
  const page = db.prepare<[string, number], { id: string; type: string | null; snapshot: string }>(
    `select id, type, snapshot from entities where state = 'canonical' and id > ? order by id limit ?`,
  )
  const floor = () => {
    const rows = page.all('', 101)
    const body = `{"data":[${rows.slice(0, 100).map((row) => `{"type":"${row.type ?? 'entity'}","id":"${row.id}","attributes":${row.snapshot}}`).join(',')}]}`
    return body.length
  }
  const registry = createRegistry({ store, auth: createApiKeyAuthenticator({ keys: ['perf-key'] }) })
  const request = { method: 'GET', url: 'http://perf.local/v1/entities?page[limit]=100', headers: new Headers({ Authorization: 'Bearer perf-key' }) }
  const listPage = async () => {
    const answer = await registry.answer(request)
    // A page is text or, from the SQLite store, bytes: either way complete, ready to send.
    const { body } = answer
    if (answer.status !== 200 || !(typeof body === 'string' || body instanceof Uint8Array)) throw new Error(`status ${answer.status}`)
    return body.length
  }
  await cost(PER_ROUND, floor)
  await cost(PER_ROUND, listPage)
  const ratios: number[] = []
  for (let round = 0; round < ROUNDS; round++) ratios.push((await cost(PER_ROUND, listPage)) / (await cost(PER_ROUND, floor)))
  db.close()
  const ratio = ratios.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!
  console.log(`list page: ${ratio.toFixed(2)} times the floor in-process (recorded ${BASELINE})`)
  expect(ratio).toBeLessThanOrEqual(BASELINE * 1.3)
}, 120_000)
