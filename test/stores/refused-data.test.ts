/** Data no store can keep or no answer can carry is refused at the door, alike on every store. */
import { expect, it } from 'vitest'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import { RECORD_LIMITS } from '../../src/warehouse/record-limits.js'
import { importNdjson } from '../../src/warehouse/import.js'
import { describeEachStore, storeDialects, useStore } from './each-store.js'
import { testRegistry } from '../support/demo.js'
import { expectError } from '../support/documents.js'
import { tmpdir } from 'node:os'

const rendition = (fields: Record<string, unknown>) =>
  JSON.stringify({ id: `r${Math.random().toString(36).slice(2, 8)}`, type: 'bill', texts: [{ renditions: [{ conversion: 'original', mime: 'text/html', filename: 'a.html', ...fields }] }] })

describeEachStore(storeDialects, 'refused data', (dialect) => {
  const store = useStore(dialect)
  const importLines = (lines: string[]) => importNdjson(lines, { warehouse: store().warehouse, blobs: createMemoryBlobStore(), baseDir: tmpdir() })

  it('answers a NUL byte or a second ".." in a filter with 400, on list and changes', async () => {
    await store().warehouse.upsert({ id: 'p1', type: 'person', name: 'Ada' })
    const { get } = testRegistry(store())
    for (const path of ['/v1/entities', '/v1/entities/changes']) {
      await expectError(await get(`${path}?filter=name:a%00b`), 400, 'invalid_filter', 'filter')
      await expectError(await get(`${path}?filter=-name:%00`), 400, 'invalid_filter', 'filter')
      const error = await expectError(await get(`${path}?filter=displayDate:a..b..c`), 400, 'invalid_filter', 'filter')
      expect(error.detail).toContain('more than one ".."')
    }
  })

  it('refuses records holding NUL anywhere, and imports the good lines around them', async () => {
    const report = await importLines([
      JSON.stringify({ id: 'ok1', type: 'person', name: 'One' }),
      JSON.stringify({ id: 'nul1', type: 'person', name: 'a\u0000b' }),
      JSON.stringify({ id: 'nul2', type: 'person', party: 'private\u0000value' }),
      JSON.stringify({ id: 'nul3', type: 'person', nested: { ['k\u0000']: 1 } }),
      JSON.stringify({ id: 'nul4', type: 'bill', texts: [{ localUrl: 'x\u0000', renditions: [] }] }),
      // The six characters \u0000, not a NUL: kept.
      JSON.stringify({ id: 'ok2', type: 'person', name: 'Two \\u0000' }),
    ])
    expect(report.errors.map((error) => [error.line, error.message])).toEqual([
      [2, 'name: holds a NUL character, which no store keeps'],
      [3, 'party: holds a NUL character, which no store keeps'],
      [4, 'nested."k\\u0000": holds a NUL character, which no store keeps'],
      [5, 'texts.0.localUrl: holds a NUL character, which no store keeps'],
    ])
    const listed = await store().listEntities({ qualifiers: [], after: null, limit: 10 })
    expect(listed.entities.map((entity) => entity.id)).toEqual(['ok1', 'ok2'])
  })

  it('refuses renditions whose mime, language or filename could break a download header', async () => {
    const report = await importLines([
      rendition({ mime: 'text/html\r\nSet-Cookie: x=1' }),
      rendition({ mime: 'text/html', language: 'en\r\nX: y' }),
      rendition({ mime: 'html' }),
      rendition({ language: 'english please' }),
      rendition({ filename: 'a\nb.html' }),
      rendition({ filename: '' }),
      JSON.stringify({ id: 'tm', type: 'bill', texts: [{ mime: 'text/plain\r\n', renditions: [] }] }),
      rendition({ mime: 'text/html; charset="utf-8"', language: 'zh-Hant-TW', filename: 'résumé (final).html' }),
    ])
    expect(report.errors.map((error) => [error.line, error.message])).toEqual([
      [1, 'texts.0.renditions.0.mime: must be a media type such as text/html or text/html; charset=utf-8'],
      [2, 'texts.0.renditions.0.language: must be a language tag such as en or en-US'],
      [3, 'texts.0.renditions.0.mime: must be a media type such as text/html or text/html; charset=utf-8'],
      [4, 'texts.0.renditions.0.language: must be a language tag such as en or en-US'],
      [5, 'texts.0.renditions.0.filename: must not hold control characters'],
      [6, 'texts.0.renditions.0.filename: must not be empty'],
      [7, 'texts.0.mime: must be a media type such as text/html or text/html; charset=utf-8'],
    ])
    expect(report.applied).toBe(1)
  })

  it('refuses a type that is not a JSON:API member name', async () => {
    const report = await importLines(
      ['', '-person', 'person-', 'a/b', 'a.b', ' person', 'type"x', 'legislative-act', 'Person 2', 'personé'].map((type, index) =>
        JSON.stringify({ id: `t${index}`, type, name: 'x' }),
      ),
    )
    expect(report.errors.map((error) => error.line)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(report.errors[0]!.message).toBe('type: must be a JSON:API member name: letters and digits, with -, _ or space only inside')
    const listed = await store().listEntities({ qualifiers: [], after: null, limit: 10 })
    const types = await Promise.all(listed.entities.map(async (entity) => (await store().getEntity(entity.id))?.snapshot.type))
    expect(types).toEqual(['legislative-act', 'Person 2', 'personé'])
  })

  it('refuses records over the size limits, saying the limit', async () => {
    const publicLimit = RECORD_LIMITS.publicSnapshotBytes
    const report = await importLines([
      JSON.stringify({ id: 'fits', type: 'bill', title: 'x'.repeat(publicLimit - 100) }),
      JSON.stringify({ id: 'public', type: 'bill', title: 'x'.repeat(publicLimit) }),
      JSON.stringify({ id: 'private', type: 'bill', title: 'small', archive: 'y'.repeat(RECORD_LIMITS.recordBytes) }),
    ])
    expect(report.errors.map((error) => error.line)).toEqual([2, 3])
    expect(report.errors[0]!.message).toContain(`at most ${publicLimit} are published per entity`)
    expect(report.errors[1]!.message).toContain(`a record may have at most ${RECORD_LIMITS.recordBytes}`)
    await expect(store().warehouse.upsert({ id: 'direct', type: 'bill', title: 'x'.repeat(publicLimit) })).rejects.toThrow('published per entity')
    expect((await store().listEntities({ qualifiers: [], after: null, limit: 10 })).entities.map((entity) => entity.id)).toEqual(['fits'])
  })
})
