import { createReadStream } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { Readable } from 'node:stream'
import type { BlobStore } from '../ports/blob-store.js'
import { WarehouseError, type EntityRecord, type OperationResult, type Warehouse, type WarehouseOperation } from '../ports/warehouse.js'
import { normalizeRecord } from './record.js'

export interface ImportOptions {
  warehouse: Warehouse
  blobs: BlobStore
  /**
   * Rendition `file` paths are relative to this directory (the NDJSON file's), and must stay inside
   * it: an absolute path, `..` or a symbolic link that leads out of it is refused.
   */
  baseDir: string
  /** Operations per transaction. */
  batchSize?: number
}

export interface ImportReport {
  applied: number
  unchanged: number
  errors: { line: number; message: string }[]
}

/**
 * Imports NDJSON: each line an entity record (upsert) or `{"op":"delete"|"drain","id"}` /
 * `{"op":"merge","id","into"}`. A bad line is reported with its number and nothing of it is written;
 * the other lines still apply.
 */
export async function importNdjson(lines: AsyncIterable<string> | Iterable<string>, options: ImportOptions): Promise<ImportReport> {
  const report: ImportReport = { applied: 0, unchanged: 0, errors: [] }
  const batchSize = options.batchSize ?? 500
  let batch: { line: number; operation: WarehouseOperation }[] = []
  const flush = async () => {
    const results = await options.warehouse.apply(batch.map((entry) => entry.operation))
    results.forEach((result: OperationResult, index) => {
      if (!result.ok) report.errors.push({ line: batch[index]!.line, message: result.error.message })
      else if (result.change) report.applied++
      else report.unchanged++
    })
    batch = []
  }
  // Resolved once: containment is checked between real paths, links followed.
  const baseDir = await realpath(options.baseDir)
  let lineNumber = 0
  for await (const text of lines) {
    lineNumber++
    if (text.trim() === '') continue
    try {
      const operation = parseOperation(text)
      if (operation.op === 'upsert') await storeRenditionFiles(operation.record, baseDir, options.blobs)
      batch.push({ line: lineNumber, operation })
    } catch (error) {
      if (!(error instanceof WarehouseError)) throw error
      report.errors.push({ line: lineNumber, message: error.message })
    }
    if (batch.length >= batchSize) await flush()
  }
  if (batch.length > 0) await flush()
  report.errors.sort((a, b) => a.line - b.line)
  return report
}

export function parseOperation(text: string): WarehouseOperation {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new WarehouseError('invalid_record', 'is not valid JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new WarehouseError('invalid_record', 'is not a JSON object')
  }
  const object = value as Record<string, unknown>
  if (!('op' in object)) return { op: 'upsert', record: object as EntityRecord }
  const { op, id, into, ...rest } = object
  const extra = Object.keys(rest)
  if (typeof id !== 'string') throw new WarehouseError('invalid_record', 'an operation needs a string "id"')
  if (extra.length > 0) throw new WarehouseError('invalid_record', `unknown key "${extra[0]}" in an operation`)
  if (op === 'delete' || op === 'drain') {
    if (into !== undefined) throw new WarehouseError('invalid_record', `"into" belongs to merge, not ${op}`)
    return { op, id }
  }
  if (op === 'merge') {
    if (typeof into !== 'string') throw new WarehouseError('invalid_record', 'a merge needs a string "into"')
    return { op, id, into }
  }
  throw new WarehouseError('invalid_record', `unknown op ${JSON.stringify(op)}; expected delete, merge or drain`)
}

/** Blobs are content for a rendition id; writing them before the row commits leaves at most an unused blob. */
async function storeRenditionFiles(record: EntityRecord, baseDir: string, blobs: BlobStore): Promise<void> {
  const { renditionFiles } = normalizeRecord(record)
  for (const { renditionId, file } of renditionFiles) {
    const path = await confinedFile(baseDir, file)
    // Streamed: memory does not grow with the file.
    await blobs.put(renditionId, Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>)
  }
}

/**
 * The real path of a rendition file, which must be a regular file inside `baseDir` (a real path):
 * an import must not publish other files of the machine, such as the store's own database.
 */
async function confinedFile(baseDir: string, file: string): Promise<string> {
  if (isAbsolute(file)) throw new WarehouseError('invalid_record', `rendition file ${file} must be a path relative to the NDJSON file`)
  let path: string
  try {
    path = await realpath(resolve(baseDir, file))
  } catch {
    throw new WarehouseError('invalid_record', `rendition file ${file} cannot be read`)
  }
  const inside = relative(baseDir, path)
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new WarehouseError('invalid_record', `rendition file ${file} lies outside the NDJSON file's directory`)
  }
  if (!(await stat(path)).isFile()) throw new WarehouseError('invalid_record', `rendition file ${file} is not a regular file`)
  return path
}

export function baseDirOf(ndjsonPath: string): string {
  return dirname(resolve(ndjsonPath))
}
