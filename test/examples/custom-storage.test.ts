// The custom-storage example (examples/custom-storage) works as its README says: its LMDB store
// passes the store conformance kit under node:test, and `npm start` serves the demo data over it.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { entityCollectionDocumentSchema, entityDocumentSchema } from '../../src/contract/schemas.js'
import { readDocument } from '../support/documents.js'
import { installedExample, npm, startListening, type ListeningProcess } from '../support/processes.js'

/** The kit has 45 cases (warehouse 8, listEntities 2, qualifiers 30, listChanges 4, api keys 1). */
const KIT_CASES = 45

describe('examples/custom-storage (an LMDB store)', () => {
  let example = ''
  beforeAll(() => {
    example = installedExample('custom-storage')
  }, 240_000)

  it('passes the store conformance kit with `npm test`', () => {
    const result = spawnSync(npm, ['test'], { cwd: example, encoding: 'utf8', timeout: 120_000 })
    const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(result.stdout)?.[1] ?? NaN)
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0)
    expect(count('fail')).toBe(0)
    expect(count('pass')).toBeGreaterThanOrEqual(KIT_CASES)
  }, 120_000)

  describe('npm start', () => {
    const data = mkdtempSync(join(tmpdir(), 'er-lmdb-example-'))
    let server: ListeningProcess | undefined
    let url = ''
    const get = (path: string) => fetch(new URL(path, url), { headers: { Authorization: 'Bearer test-key' } })

    beforeAll(async () => {
      server = await startListening(npm, ['start'], {
        cwd: example,
        env: { PORT: '0', HOST: '127.0.0.1', ENTITY_REGISTRY_API_KEYS: 'test-key', DATA_DIR: data },
      })
      url = server.url
    }, 60_000)

    afterAll(async () => {
      await server?.stop()
      rmSync(data, { recursive: true, force: true })
    })

    it('serves keyset pages of the demo data with absolute next links', async () => {
      const response = await get('/v1/entities?page[limit]=5')
      expect(response.status).toBe(200)
      const first = await readDocument(response, entityCollectionDocumentSchema)
      expect(first.data).toHaveLength(5)
      const next = new URL(first.links.next!)
      expect(next.origin).toBe(new URL(url).origin)
      const ids = first.data.map((entity) => entity.id)
      expect([...ids].sort()).toEqual(ids)
      expect(next.searchParams.get('page[after]')).toBe(ids.at(-1))

      const second = await readDocument(await get(next.href), entityCollectionDocumentSchema)
      expect(second.data).toHaveLength(5)
      expect(second.data[0]!.id > ids.at(-1)!).toBe(true)
    })

    it('gets a demo entity, and refuses a request without the key', async () => {
      const document = await readDocument(await get('/v1/entities/a000039'), entityDocumentSchema)
      expect(document.data).toMatchObject({ type: 'person', id: 'a000039', attributes: { name: 'John Adams', title: 'President' } })
      expect((await fetch(new URL('/v1/entities/a000039', url))).status).toBe(401)
    })
  })
})
