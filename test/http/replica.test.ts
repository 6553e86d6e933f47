import type { z } from 'zod'
import { expect, it } from 'vitest'
import { changesDocumentSchema, entityCollectionDocumentSchema } from '../../src/contract/schemas.js'
import { useDemoRegistry } from '../support/demo.js'
import { readDocument } from '../support/documents.js'
import { describeEachStore, storeDialects } from '../stores/each-store.js'

/** A deterministic pseudo-random sequence (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Replica = Map<string, { type: string; attributes: unknown }>

describeEachStore(storeDialects, 'a replica', (dialect) => {
  const { store, get } = useDemoRegistry(dialect, { changesWindow: 500 })

  /** Random creates, updates, deletes, merges and drains; returns when all are done. */
  async function writeRandomly(operations: number, next: () => number) {
    const warehouse = store().warehouse
    const pick = <T,>(items: T[]) => items[Math.floor(next() * items.length)]!
    const live = (await store().listEntities({ qualifiers: [], after: null, limit: 100 })).entities.map((e) => e.id)
    const gone: string[] = []
    for (let index = 0; index < operations; index++) {
      const roll = next()
      const id = live.length > 0 ? pick(live) : undefined
      if (roll < 0.3 || id === undefined) {
        const fresh = next() < 0.2 && gone.length > 0 ? gone.splice(gone.indexOf(pick(gone)), 1)[0]! : `r${index.toString(36)}`
        await warehouse.upsert({ id: fresh, type: pick(['person', 'committee']), name: `Name ${index}`, status: pick(['serving', 'former']) })
        live.push(fresh)
      } else if (roll < 0.7) {
        await warehouse.upsert({ id, type: 'person', name: `Renamed ${index}`, jurisdiction: pick(['US-WA', 'US-OR']) })
      } else if (roll < 0.85 || live.length < 2) {
        await (roll < 0.8 ? warehouse.delete(id) : warehouse.drain(id))
        live.splice(live.indexOf(id), 1)
        gone.push(id)
      } else {
        const target = pick(live.filter((other) => other !== id))
        await warehouse.merge(id, target)
        live.splice(live.indexOf(id), 1)
      }
      // Let the reader interleave with the writer.
      if (index % 10 === 0) await new Promise((resolve) => setImmediate(resolve))
    }
  }

  async function backfill(replica: Replica): Promise<string> {
    let next: string | undefined = '/v1/entities?page[limit]=50'
    let head: string | null = null
    while (next) {
      const response = await get(next)
      // The head seen first: every change after it is replayed, so nothing the back-fill missed is lost.
      head ??= response.headers.get('change-feed-head')
      const document = await readDocument(response, entityCollectionDocumentSchema)
      for (const entity of document.data) replica.set(entity.id, { type: entity.type, attributes: entity.attributes })
      next = document.links.next
    }
    return head!
  }

  /** Follows the feed from `cursor` to its current head; tombstones match the negation only. */
  async function follow(replica: Replica, cursor: string): Promise<string> {
    let next: string | undefined = `/v1/entities/changes?filter=${encodeURIComponent('-type:""')}&page[after]=${cursor}&page[limit]=100`
    while (next) {
      const document: z.infer<typeof changesDocumentSchema> = await readDocument(await get(next), changesDocumentSchema)
      for (const change of document.data) {
        const id = change.relationships.entity.data.id
        const { changeType, changedKeys: _keys, mergedInto: _into, recordedAt: _at, ...attributes } = change.attributes
        if (changeType === 'create' || changeType === 'update') replica.set(id, { type: change.relationships.entity.data.type, attributes })
        else replica.delete(id)
      }
      cursor = document.meta.cursor ?? cursor
      next = document.links.next
    }
    return cursor
  }

  // Fewer over a database server, whose writes are round trips (2,000 took 30 to 100 s there): the
  // reader still interleaves with hundreds of them.
  const writes = dialect.name === 'memory' || dialect.name === 'sqlite' ? 2000 : 600
  it(`back-fills, follows the feed during ${writes} random writes, and converges field for field`, async () => {
    const replica: Replica = new Map()
    let writing = true
    const writer = writeRandomly(writes, random(20261122)).finally(() => (writing = false))
    let cursor = await backfill(replica)
    const writesDuringBackfill = writing
    let rounds = 0
    while (writing) {
      cursor = await follow(replica, cursor)
      rounds++
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    await writer
    await follow(replica, cursor)

    const truth: Replica = new Map()
    let after: string | null = null
    for (;;) {
      const page: z.infer<typeof entityCollectionDocumentSchema> = await readDocument(await get(`/v1/entities?page[limit]=100${after ? `&page[after]=${after}` : ''}`), entityCollectionDocumentSchema)
      for (const entity of page.data) truth.set(entity.id, { type: entity.type, attributes: entity.attributes })
      if (!page.links.next) break
      after = page.meta.cursor
    }
    // The reader really ran alongside the writer.
    expect(writesDuringBackfill).toBe(true)
    expect(rounds).toBeGreaterThan(3)
    expect(truth.size).toBeGreaterThan(500)
    expect(new Map([...replica].sort())).toEqual(new Map([...truth].sort()))
  }, 120_000)
})
