// The library's store conformance kit, run on node:test against the LMDB store: every behaviour the
// registry relies on from a store, the same cases the bundled stores pass.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { describeEntityStore } from 'entity-registry/testing'
import { createLmdbStore } from '../lmdb-store.mjs'

/** Each case gets a store in a directory of its own, removed once the kit has closed it. */
const directories = []
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true })
})

function freshStore() {
  const directory = mkdtempSync(join(tmpdir(), 'lmdb-store-'))
  directories.push(directory)
  return createLmdbStore({ path: directory })
}

describeEntityStore('LMDB store', freshStore, { describe, it, beforeEach, afterEach })

// Beyond the kit: a filtered page stopped by the scan bound ends at the last id it checked.
describe('LMDB store scan bound', () => {
  it('returns a short page with the cursor at the last id checked, and pages on to the end', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'lmdb-store-'))
    const store = createLmdbStore({ path: directory, scanLimit: 3 })
    try {
      const ops = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id) => ({ op: 'upsert', record: { id, type: id === 'f' ? 'person' : 'thing' } }))
      await store.warehouse.apply(/** @type {any} */ (ops))
      const { parseGffs } = await import('entity-registry')
      const { qualifiers } = parseGffs('type:person', { allowFreeText: false })
      const first = await store.listEntities({ qualifiers, after: null, limit: 10 })
      assertPage(first, [], true, 'c')
      const second = await store.listEntities({ qualifiers, after: 'c', limit: 10 })
      assertPage(second, ['f'], true, 'f')
      const third = await store.listEntities({ qualifiers, after: 'f', limit: 10 })
      assertPage(third, [], false, undefined)
    } finally {
      await store.close()
      rmSync(directory, { recursive: true, force: true })
    }
  })
})

/** @param {import('entity-registry').EntityPage} page */
function assertPage(page, ids, hasMore, cursor) {
  const actual = { ids: page.entities.map((entity) => entity.id), hasMore: page.hasMore, cursor: page.cursor }
  const expected = { ids, hasMore, cursor }
  if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`page ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`)
}
