import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { contentKey } from '../contract/content-key.js'
import type { BlobStore } from '../ports/blob-store.js'
import { WarehouseError, type EntityRecord, type OperationResult, type SnapshotIds, type Warehouse, type WarehouseOperation } from '../ports/warehouse.js'
import { idsOf } from './operations.js'
import { normalizeRecord, validateRecordAhead } from './record.js'
import { OverlongLine, recordTooLarge } from './record-limits.js'

export interface ImportOptions {
  warehouse: Warehouse
  blobs: BlobStore
  /**
   * Rendition `file` paths are relative to this directory (the NDJSON file's), and must stay inside
   * it: an absolute path, `..` or a symbolic link that leads out of it is refused.
   */
  baseDir: string
  /** Operations per transaction (default 500). */
  batchSize?: number
  /** Called as each line is taken from the input to apply (not on a full snapshot's first read). */
  onLine?: () => void
  /**
   * The input is the whole warehouse: after its lines apply, each canonical entity it does not name
   * is deleted (one `delete` change each, in transactions of `batchSize`). Its ids are read first,
   * into the store (`Warehouse.snapshotIds`), and the import is refused with `SnapshotRefusedError`,
   * before anything changes, when more would be deleted than `maxDelete` allows (default 10%), or when
   * a line names no id. The input is read twice: `lines` must be an array or a function that opens it
   * again. Stopped part way (`ImportStoppedError`), nothing is deleted.
   */
  full?: { maxDelete?: DeleteLimit }
}

/** How many entities a full snapshot may delete: a number, or a percentage of the canonical entities. */
export type DeleteLimit = { entities: number } | { percent: number }

/** The most a full snapshot deletes unless told otherwise. */
const DEFAULT_DELETE_LIMIT: DeleteLimit = { percent: 10 }

/** A line of the input, or in its place an `OverlongLine` (one `readLines` read past unparsed). */
export type Line = string | OverlongLine

/** Lines as `importNdjson` takes them: a function opens them anew for each read. */
export type LineSource = AsyncIterable<Line> | Iterable<Line> | (() => AsyncIterable<Line> | Iterable<Line>)

/** A full snapshot refused before anything changed. */
export class SnapshotRefusedError extends Error {
  override readonly name = 'SnapshotRefusedError'
}

/**
 * A batch failed to apply (its transaction rolled back: the store away, or broken), or the input
 * failed to read (a truncated gzip stream): the lines before `line` are applied, none from it on.
 */
export class ImportStoppedError extends Error {
  override readonly name = 'ImportStoppedError'
  constructor(
    /** The first line of the batch that failed. */
    readonly line: number,
    cause: unknown,
  ) {
    super(`stopped at line ${line}: ${(cause as Error).message}`, { cause })
  }
}

export interface ImportReport {
  applied: number
  unchanged: number
  errors: { line: number; message: string }[]
  /** A full snapshot's: the entities it did not name, deleted. */
  deleted?: number
}

/**
 * Imports NDJSON: each line an entity record (upsert) or `{"op":"delete"|"drain","id"}` /
 * `{"op":"merge","id","into"}`. A bad line is reported with its number and nothing of it is written;
 * the other lines still apply. Each batch is one transaction: one that fails throws
 * `ImportStoppedError` with its first line (the lines before it are applied); so does a failure to
 * read `lines`. With `full`, the input is the whole warehouse (see `ImportOptions.full`).
 */
export async function importNdjson(lines: LineSource, options: ImportOptions): Promise<ImportReport> {
  if (options.full === undefined) return applyLines(typeof lines === 'function' ? lines() : lines, options)
  if (typeof lines !== 'function' && !Array.isArray(lines)) throw new TypeError('a full snapshot reads its lines twice: give an array or a function that opens them again')
  const open = typeof lines === 'function' ? lines : () => lines
  if (options.warehouse.snapshotIds === undefined) throw new TypeError('this store cannot import a full snapshot: its warehouse has no snapshotIds()')
  const named = await options.warehouse.snapshotIds()
  try {
    await checkSnapshot(open(), named, options.full.maxDelete ?? DEFAULT_DELETE_LIMIT)
    const report = await applyLines(open(), options)
    report.deleted = await deleteAbsent(named, options)
    return report
  } finally {
    await named.close()
  }
}

/** Reads the ids a full snapshot names into `named`; refuses it when it would delete too many. */
async function checkSnapshot(lines: AsyncIterable<Line> | Iterable<Line>, named: SnapshotIds, maxDelete: DeleteLimit): Promise<void> {
  let ids: string[] = []
  let lineNumber = 0
  for await (const text of lines) {
    lineNumber++
    // Its id is not read: the entity it names would be deleted as absent.
    if (text instanceof OverlongLine) throw new SnapshotRefusedError(`line ${lineNumber} ${recordTooLarge(text.bytes).message}: a full snapshot must name each of its entities`)
    if (text.trim() === '') continue
    let operation: WarehouseOperation | undefined
    try {
      operation = parseOperation(text)
    } catch (error) {
      if (!(error instanceof WarehouseError)) throw error
    }
    const lineIds = operation === undefined ? [] : idsOf([operation])
    // Its entity, unknown, would be deleted as absent.
    if (lineIds.length === 0) throw new SnapshotRefusedError(`line ${lineNumber} names no entity id: a full snapshot must name each of its entities`)
    ids.push(...lineIds)
    if (ids.length >= ID_CHUNK) {
      await named.add(ids)
      ids = []
    }
  }
  await named.add(ids)
  const { canonical, absent } = await named.countAbsent()
  const limit = 'entities' in maxDelete ? maxDelete.entities : Math.floor((canonical * maxDelete.percent) / 100)
  if (absent > limit) {
    const allowed = 'entities' in maxDelete ? `${limit}` : `${maxDelete.percent}%, ${limit} entities`
    throw new SnapshotRefusedError(`a full snapshot would delete ${absent} of ${canonical} entities, more than the limit (${allowed})`)
  }
}

/** Ids sent to the store at a time while a full snapshot is read. */
const ID_CHUNK = 10_000

/** Deletes the canonical entities a full snapshot did not name, a batch a transaction; how many. */
async function deleteAbsent(named: SnapshotIds, { warehouse, batchSize = DEFAULT_BATCH }: ImportOptions): Promise<number> {
  let deleted = 0
  for (let after: string | null = null; ; ) {
    const ids = await named.absent(after, batchSize)
    if (ids.length === 0) return deleted
    const results = await warehouse.apply(ids.map((id) => ({ op: 'delete', id })))
    deleted += results.filter((result) => result.ok && result.change !== null).length
    after = ids.at(-1)!
  }
}

const DEFAULT_BATCH = 500

/**
 * Applies the lines a batch a transaction, one transaction at a time and in order; the next batch
 * is read (and, when the last one mostly changed entities, validated) while the one before it is
 * applied: a store on a server keeps the process waiting for about half a fresh load.
 */
async function applyLines(lines: AsyncIterable<Line> | Iterable<Line>, options: ImportOptions): Promise<ImportReport> {
  const report: ImportReport = { applied: 0, unchanged: 0, errors: [] }
  const batchSize = options.batchSize ?? DEFAULT_BATCH
  type Batch = { line: number; operation: WarehouseOperation }[]
  let batch: Batch = []
  /** The batch in its transaction; it rejects with ImportStoppedError. */
  let applying: Promise<void> = Promise.resolve()
  /** Whether most of the last batch's lines changed their entity: the next one's are likely to need validating too. */
  let validateAhead = false
  const applyBatch = async (entries: Batch) => {
    const results = await options.warehouse.apply(entries.map((entry) => entry.operation)).catch((error: unknown) => {
      throw new ImportStoppedError(entries[0]!.line, error)
    })
    let changed = 0
    results.forEach((result: OperationResult, index) => {
      if (!result.ok) report.errors.push({ line: entries[index]!.line, message: result.error.message })
      else if (result.change) changed++
      else report.unchanged++
    })
    report.applied += changed
    validateAhead = changed > entries.length / 2
  }
  const flush = async () => {
    const entries = batch
    batch = []
    // One transaction at a time: a batch begins once the one before it has committed.
    await applying
    applying = applyBatch(entries)
    // Observed at the next flush or the end, not an unhandled rejection meanwhile.
    applying.catch(() => undefined)
  }
  // Resolved once: containment is checked between real paths, links followed.
  const baseDir = await realpath(options.baseDir)
  let lineNumber = 0
  const read = async function* () {
    try {
      yield* lines
    } catch (error) {
      // The batch being gathered is not applied: the input broke off, perhaps mid-way through it.
      throw new ImportStoppedError(batch[0]?.line ?? lineNumber + 1, error)
    }
  }
  try {
    for await (const text of read()) {
      lineNumber++
      options.onLine?.()
      if (text instanceof OverlongLine) {
        report.errors.push({ line: lineNumber, message: recordTooLarge(text.bytes).message })
        continue
      }
      if (text.trim() === '') continue
      try {
        const operation = parseOperation(text)
        if (operation.op === 'upsert') {
          const record = await storeRenditionFiles(operation.record, baseDir, options.blobs)
          if (validateAhead) validateRecordAhead(record)
          batch.push({ line: lineNumber, operation: { ...operation, record } })
        } else batch.push({ line: lineNumber, operation })
      } catch (error) {
        if (!(error instanceof WarehouseError)) throw error
        report.errors.push({ line: lineNumber, message: error.message })
      }
      if (batch.length >= batchSize) await flush()
    }
    if (batch.length > 0) await flush()
  } catch (error) {
    // The batch in its transaction ends first; its failure, on earlier lines, is the one to report.
    await applying
    throw error
  }
  await applying
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

/**
 * Stores each rendition file's bytes under their SHA-256 (once: the same bytes already stored are
 * not written again) and returns the record with each such rendition's `sha256`. Written before the
 * row commits: a failure leaves at most an unused blob.
 */
async function storeRenditionFiles(record: EntityRecord, baseDir: string, blobs: BlobStore): Promise<EntityRecord> {
  // Most records name no file: they are validated once, when applied.
  if (!namesFiles(record)) return record
  const { renditionFiles } = normalizeRecord(record)
  if (renditionFiles.length === 0) return record
  const texts = structuredClone(record.texts as { renditions: Record<string, unknown>[] }[])
  for (const { file, textIndex, renditionIndex } of renditionFiles) {
    const path = await confinedFile(baseDir, file)
    const sha256 = await sha256Of(path)
    const key = contentKey(sha256)
    // Streamed: memory does not grow with the file.
    if ((await blobs.stat(key)) === null) await blobs.put(key, Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>)
    texts[textIndex]!.renditions[renditionIndex]!.sha256 = sha256
  }
  return { ...record, texts } as EntityRecord
}

/** Whether any rendition of the record has a `file` (however malformed the record). */
function namesFiles(record: EntityRecord): boolean {
  const texts: unknown = record.texts
  if (!Array.isArray(texts)) return false
  return texts.some((text: { renditions?: unknown } | null) => {
    const renditions = text?.renditions
    return Array.isArray(renditions) && renditions.some((rendition: { file?: unknown } | null) => rendition?.file !== undefined)
  })
}

function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256')
  return pipeline(createReadStream(path), hash).then(() => hash.digest('hex'))
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
