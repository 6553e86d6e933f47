import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createMemoryBlobStore, createMemoryStore } from '../../src/memory/index.js'
import { ImportStoppedError, importNdjson } from '../../src/warehouse/import.js'
import { blobKeyOf } from '../../src/contract/content-key.js'
import type { BlobStore } from '../../src/ports/blob-store.js'
import type { Warehouse } from '../../src/ports/warehouse.js'
import { openData } from '../../src/node/data-dir.js'
import { importFile } from '../../src/node/embedded-registry.js'
import { RECORD_LIMITS } from '../../src/warehouse/record-limits.js'

function importLines(lines: string[], baseDir = tmpdir()) {
  const store = createMemoryStore()
  const blobs = createMemoryBlobStore()
  return importNdjson(lines, { warehouse: store.warehouse, blobs, baseDir, batchSize: 3 }).then((report) => ({ report, store, blobs }))
}

describe('NDJSON import', () => {
  it('reports each bad line by number and writes nothing of it', async () => {
    const { report, store } = await importLines([
      JSON.stringify({ id: 'p1', type: 'person', name: 'One' }),
      '{not json',
      JSON.stringify({ id: 'Bad-Id', type: 'person' }),
      JSON.stringify({ id: 'p2', type: 'person', name: 42 }),
      '',
      JSON.stringify({ id: 'p3', type: 'person', texts: [{ renditions: [{ mime: 'text/html', filename: 'a.html' }] }] }),
      JSON.stringify({ id: 'p4', type: 'person', texts: [{ renditions: [], extra: 1 }] }),
      JSON.stringify({ op: 'merge', id: 'p1', into: 'missing' }),
      JSON.stringify({ op: 'explode', id: 'p1' }),
      JSON.stringify({ id: 'p5', type: 'person', texts: [{ renditions: [{ conversion: 'original', mime: 'text/html', filename: 'a.html', file: 'nope/a.html' }] }] }),
      JSON.stringify({ id: 'p6', type: 'person', name: 'Six' }),
    ])
    expect(report.errors.map((error) => error.line)).toEqual([2, 3, 4, 6, 7, 8, 9, 10])
    expect(report.errors[2]!.message).toContain('name')
    expect(report.applied).toBe(2)
    const page = await store.listEntities({ qualifiers: [], after: null, limit: 100 })
    expect(page.entities.map((entity) => entity.id)).toEqual(['p1', 'p6'])
    expect((await store.listChanges({ qualifiers: [], after: null, limit: 100, window: 100 })).changes).toHaveLength(2)
  })

  it('applies operations in order and derives the same public ids on every import', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'er-import-'))
    writeFileSync(join(directory, 'doc.txt'), 'hello')
    const record = {
      id: 'b1',
      type: 'legislation',
      title: 'A bill',
      texts: [{ localUrl: 'https://example.org/b1', renditions: [{ conversion: 'original', mime: 'text/plain', filename: 'doc.txt', file: 'doc.txt' }] }],
    }
    const lines = [
      JSON.stringify(record),
      JSON.stringify({ id: 'b2', type: 'legislation', title: 'Another' }),
      JSON.stringify({ op: 'merge', id: 'b2', into: 'b1' }),
      JSON.stringify({ op: 'drain', id: 'b2' }),
    ]
    const first = await importLines(lines, directory)
    const second = await importLines(lines, directory)
    expect(first.report).toEqual({ applied: 4, unchanged: 0, errors: [] })
    const [a, b] = await Promise.all([first.store.getEntity('b1'), second.store.getEntity('b1')])
    expect(a!.snapshot.texts).toEqual(b!.snapshot.texts)
    const rendition = a!.snapshot.texts[0]!.renditions[0]!
    expect(rendition.renditionId).toMatch(/^rnd_[0-9a-f]{32}$/)
    expect(await first.blobs.stat(blobKeyOf(rendition))).toMatchObject({ size: 5 })
    expect((await first.store.getEntity('b2'))!.state).toBe('drained')
  })

  it('keeps rendition files inside the NDJSON file\'s directory, links followed', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'er-outside-'))
    writeFileSync(join(outside, 'secret.txt'), 'not for publication')
    const directory = mkdtempSync(join(tmpdir(), 'er-import-'))
    mkdirSync(join(directory, 'files'))
    writeFileSync(join(directory, 'files', 'ok.txt'), 'fine')
    symlinkSync(join(outside, 'secret.txt'), join(directory, 'files', 'leak.txt'))
    symlinkSync(join(directory, 'files', 'ok.txt'), join(directory, 'alias.txt'))
    symlinkSync(outside, join(directory, 'elsewhere'))
    const withFile = (id: string, file: string) =>
      JSON.stringify({ id, type: 'bill', texts: [{ localUrl: id, renditions: [{ conversion: 'original', mime: 'text/plain', filename: 'f.txt', file }] }] })
    const { report, store, blobs } = await importLines(
      [
        withFile('a1', '../../../../../../../../etc/passwd'),
        withFile('a2', '/etc/passwd'),
        withFile('a3', join(outside, 'secret.txt')),
        withFile('a4', 'files/leak.txt'),
        withFile('a5', 'elsewhere/secret.txt'),
        withFile('a6', 'files'),
        withFile('a7', 'files/../../' + outside.split('/').at(-1) + '/secret.txt'),
        withFile('ok1', 'files/ok.txt'),
        withFile('ok2', 'alias.txt'),
        withFile('ok3', './files/../files/ok.txt'),
      ],
      directory,
    )
    expect(report.errors.map(({ line, message }) => [line, message.replace(/^rendition file \S+/, 'rendition FILE')])).toEqual([
      [1, "rendition FILE lies outside the NDJSON file's directory"],
      [2, 'rendition FILE must be a path relative to the NDJSON file'],
      [3, 'rendition FILE must be a path relative to the NDJSON file'],
      [4, "rendition FILE lies outside the NDJSON file's directory"],
      [5, "rendition FILE lies outside the NDJSON file's directory"],
      [6, 'rendition FILE is not a regular file'],
      [7, "rendition FILE lies outside the NDJSON file's directory"],
    ])
    const listed = await store.listEntities({ qualifiers: [], after: null, limit: 100 })
    expect(listed.entities.map((entity) => entity.id)).toEqual(['ok1', 'ok2', 'ok3'])
    for (const { id } of listed.entities) {
      const rendition = (await store.getEntity(id))!.snapshot.texts[0]!.renditions[0]!
      expect(await new Response(await blobs.get(blobKeyOf(rendition))).text()).toBe('fine')
    }
  })

  it('stores equal bytes once, under their SHA-256, and sees changed bytes as a change', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'er-import-'))
    writeFileSync(join(directory, 'a.txt'), 'same bytes')
    writeFileSync(join(directory, 'b.txt'), 'same bytes')
    const store = createMemoryStore()
    const memory = createMemoryBlobStore()
    const puts: string[] = []
    // The real store, counting what is written to it.
    const blobs: BlobStore = { ...memory, put: (key, bytes) => (puts.push(key), memory.put(key, bytes)) }
    const record = (id: string, file: string) =>
      JSON.stringify({ id, type: 'legislation', texts: [{ renditions: [{ conversion: 'original', mime: 'text/plain', filename: file, file }] }] })
    const apply = (lines: string[]) => importNdjson(lines, { warehouse: store.warehouse, blobs, baseDir: directory })

    expect(await apply([record('b1', 'a.txt'), record('b2', 'b.txt')])).toMatchObject({ applied: 2, errors: [] })
    const [one, two] = await Promise.all(['b1', 'b2'].map(async (id) => (await store.getEntity(id))!.snapshot.texts[0]!.renditions[0]!))
    expect(one!.sha256).toBe('58100dc8fc06562ce3e578231dc948e083520ee49c4b4ee5a5a28bb4b4003feb') // sha256("same bytes")
    expect(blobKeyOf(one!)).toBe(blobKeyOf(two!))
    expect(puts).toEqual([blobKeyOf(one!)])

    // Importing the same again writes no bytes and changes nothing.
    expect(await apply([record('b1', 'a.txt')])).toMatchObject({ applied: 0, unchanged: 1 })
    expect(puts).toHaveLength(1)

    // New bytes under the same file name: a new blob, and an update in the feed.
    writeFileSync(join(directory, 'a.txt'), 'other bytes')
    expect(await apply([record('b1', 'a.txt')])).toMatchObject({ applied: 1 })
    const changed = (await store.getEntity('b1'))!.snapshot.texts[0]!.renditions[0]!
    expect(changed.sha256).not.toBe(one!.sha256)
    expect(await new Response(await memory.get(blobKeyOf(changed))).text()).toBe('other bytes')
    const feed = await store.listChanges({ qualifiers: [], after: null, limit: 10, window: 10 })
    expect(feed.changes.map((change) => [change.entityId, change.changeType, change.changedKeys])).toEqual([
      ['b1', 'create', expect.any(Array)],
      ['b2', 'create', expect.any(Array)],
      ['b1', 'update', ['texts']],
    ])
  })

  it('stops where the input breaks off: the batches before it are applied, the one being read is not', async () => {
    async function* brokenOff() {
      for (let index = 1; index <= 7; index++) yield JSON.stringify({ id: `p${index}`, type: 'person', name: `P${index}` })
      throw new Error('gzip: unexpected end of file')
    }
    const store = createMemoryStore()
    const stopped = importNdjson(brokenOff(), { warehouse: store.warehouse, blobs: createMemoryBlobStore(), baseDir: tmpdir(), batchSize: 3 })
    await expect(stopped).rejects.toThrow(new ImportStoppedError(7, new Error('gzip: unexpected end of file')))
    const page = await store.listEntities({ qualifiers: [], after: null, limit: 100 })
    expect(page.entities.map((entity) => entity.id)).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6'])
  })

  /** The memory store's warehouse, each transaction slowed (as a server's) and watched; `failAt` fails that one. */
  function slowWarehouse(failAt?: number) {
    const store = createMemoryStore()
    const watched = { store, calls: 0, open: 0, mostOpen: 0, linesReadAtEnd: [] as number[], read: 0 }
    const warehouse: Warehouse = {
      ...store.warehouse,
      async apply(operations) {
        const call = ++watched.calls
        watched.mostOpen = Math.max(watched.mostOpen, ++watched.open)
        try {
          await new Promise((resolve) => setTimeout(resolve, 20))
          if (call === failAt) throw new Error('connection lost')
          return await store.warehouse.apply(operations)
        } finally {
          watched.linesReadAtEnd.push(watched.read)
          watched.open--
        }
      },
    }
    return { warehouse, watched }
  }
  const person = (index: number) => JSON.stringify({ id: `p${index}`, type: 'person', name: `P${index}` })

  it('reads the next batch while one is applied, one transaction at a time, in order; bad lines read ahead are reported', async () => {
    const { warehouse, watched } = slowWarehouse()
    const lines = Array.from({ length: 12 }, (_, index) => (index === 9 ? JSON.stringify({ id: 'p10', type: 42 }) : person(index + 1)))
    const report = await importNdjson(lines, { warehouse, blobs: createMemoryBlobStore(), baseDir: tmpdir(), batchSize: 3, onLine: () => watched.read++ })
    expect(report).toMatchObject({ applied: 11, unchanged: 0 })
    expect(report.errors).toEqual([{ line: 10, message: expect.stringContaining('type') }])
    expect(watched.mostOpen).toBe(1)
    // While each batch was applied the next one was read (the last excepted).
    expect(watched.linesReadAtEnd).toEqual([6, 9, 12, 12])
    const feed = await watched.store.listChanges({ qualifiers: [], after: null, limit: 100, window: 100 })
    expect(feed.changes.map((change) => change.entityId)).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9', 'p11', 'p12'])
  })

  it('stops at the first line of a batch that fails while the next is read: nothing of it or after it applies', async () => {
    const { warehouse, watched } = slowWarehouse(2)
    const lines = Array.from({ length: 12 }, (_, index) => person(index + 1))
    const stopped = importNdjson(lines, { warehouse, blobs: createMemoryBlobStore(), baseDir: tmpdir(), batchSize: 3 })
    await expect(stopped).rejects.toThrow(new ImportStoppedError(4, new Error('connection lost')))
    expect(watched.calls).toBe(2)
    const page = await watched.store.listEntities({ qualifiers: [], after: null, limit: 100 })
    expect(page.entities.map((entity) => entity.id)).toEqual(['p1', 'p2', 'p3'])
  })

  it('reports a batch that fails before the input breaks off after it, as the earlier stop', async () => {
    const { warehouse, watched } = slowWarehouse(1)
    async function* brokenOff() {
      for (let index = 1; index <= 4; index++) yield person(index)
      throw new Error('gzip: unexpected end of file')
    }
    const stopped = importNdjson(brokenOff(), { warehouse, blobs: createMemoryBlobStore(), baseDir: tmpdir(), batchSize: 3 })
    await expect(stopped).rejects.toThrow(new ImportStoppedError(1, new Error('connection lost')))
    expect((await watched.store.listEntities({ qualifiers: [], after: null, limit: 100 })).entities).toEqual([])
  })
})

describe('NDJSON import of a line over the record limit', () => {
  // 12 MB: as one warehouse export held, which took 9 s (3.6 s of CPU) to refuse when held and parsed.
  const huge = JSON.stringify({ id: 'huge', type: 'person', name: 'Huge', archive: 'x'.repeat(12 * 1024 * 1024) })
  const refusal = { line: 2, message: `is ${huge.length} bytes as JSON; a record may have at most ${RECORD_LIMITS.recordBytes}` }

  it('refuses it within a second as it streams past, with the line number and size, and applies the lines around it', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'er-import-huge-'))
    const file = join(directory, 'input.ndjson')
    writeFileSync(file, [JSON.stringify({ id: 'before', type: 'person' }), huge, JSON.stringify({ id: 'after', type: 'person' })].join('\n'))
    const opened = await openData({ data: join(directory, 'data') })
    try {
      const started = performance.now()
      const report = await importFile(file, opened)
      expect(performance.now() - started).toBeLessThan(1000)
      expect(report).toEqual({ applied: 2, unchanged: 0, errors: [refusal] })
      // A full snapshot cannot read the id of such a line: it is refused before anything changes.
      await expect(importFile(file, opened, { full: {} })).rejects.toThrow(`line 2 ${refusal.message}: a full snapshot must name each of its entities`)
    } finally {
      await opened.store.close()
    }
  })
})
