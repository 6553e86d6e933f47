import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { z } from 'zod'
import type { PublicSnapshot, StoredRendition, StoredText } from '../contract/entity.js'
import { ATTRIBUTE_FIELDS } from '../contract/fields.js'
import { ENTITY_ID_PATTERN } from '../contract/ids.js'
import { renditionSchema, textSchema } from '../contract/schemas.js'
import { WarehouseError, type EntityRecord } from '../ports/warehouse.js'
import { RECORD_LIMITS, recordTooLarge } from './record-limits.js'

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const QUOTED = '"(?:[\\t !#-\\[\\]-~\\u0080-\\u00ff]|\\\\[\\t -~\\u0080-\\u00ff])*"'
/** RFC 9110 media type: type/subtype and parameters; no control character can reach a header. */
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`)
/** The shape of a BCP 47 language tag (`en`, `en-US`, `zh-Hant-TW`). */
const LANGUAGE_TAG = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/
/** JSON:API member names: allowed characters, with `-`, `_` and space only inside. */
const MEMBER_NAME = /^[A-Za-z0-9\u0080-\uffff](?:[A-Za-z0-9\u0080-\uffff_ -]*[A-Za-z0-9\u0080-\uffff])?$/
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/

const mediaType = z.string().regex(MEDIA_TYPE, 'must be a media type such as text/html or text/html; charset=utf-8')

/** The import form of a text: ids may be given (else derived) and a rendition may name its bytes' file. */
const renditionInput = renditionSchema.omit({ links: true }).extend({
  renditionId: renditionSchema.shape.renditionId.optional(),
  mime: mediaType,
  language: z.string().regex(LANGUAGE_TAG, 'must be a language tag such as en or en-US').optional(),
  filename: z.string().min(1, 'must not be empty').refine((name) => !CONTROL_CHARACTER.test(name), 'must not hold control characters'),
  /** Import only: the path of the bytes, relative to the NDJSON file. Never exposed. */
  file: z.string().optional(),
  /** The bytes' SHA-256, which import records (see StoredRendition). Never exposed. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits').optional(),
})
const textInput = textSchema.extend({ mime: mediaType.optional(), renditions: z.array(renditionInput) })

const recordInput = z.looseObject({
  id: z.string().regex(ENTITY_ID_PATTERN, 'id must match [0-9a-z]+'),
  type: z.string().regex(MEMBER_NAME, 'must be a JSON:API member name: letters and digits, with -, _ or space only inside').optional(),
  ...Object.fromEntries(ATTRIBUTE_FIELDS.map((field) => [field, z.string().optional()])),
  texts: z.array(textInput).optional(),
})

const encoder = new TextEncoder()

/** Refuses what no store may keep or no answer may carry, before any rule reads the record. */
function checkStorable(input: unknown): void {
  const json = JSON.stringify(input)
  // JSON writes U+0000 as \u0000: a record without that text holds none, in a key or a value.
  const nul = json.includes('\\u0000') ? pathOfNul(input, []) : null
  if (nul !== null) throw new WarehouseError('invalid_record', `${nul.length > 0 ? `${nul.join('.')}: ` : ''}holds a NUL character, which no store keeps`)
  const bytes = bytesOver(json, RECORD_LIMITS.recordBytes)
  if (bytes !== null) throw recordTooLarge(bytes)
}

/** A text's length in UTF-8 when it is over `limit`, else null; encoded only when it could be (3 bytes a UTF-16 unit at most). */
function bytesOver(text: string, limit: number): number | null {
  if (text.length * 3 <= limit) return null
  const bytes = encoder.encode(text).byteLength
  return bytes > limit ? bytes : null
}

/** Where a string (or a key) holds U+0000, or null. */
function pathOfNul(value: unknown, path: string[]): string[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null
  if (typeof value !== 'object' || value === null) return null
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return [...path, JSON.stringify(key)]
    const found = pathOfNul(item, [...path, key])
    if (found !== null) return found
  }
  return null
}

/** A rendition whose bytes an import must store, keyed by its public id. */
export interface RenditionFile {
  renditionId: string
  file: string
  /** Where the rendition is in the record: `texts[textIndex].renditions[renditionIndex]`. */
  textIndex: number
  renditionIndex: number
}

export interface NormalizedRecord {
  id: string
  /** What the service may expose. */
  snapshot: PublicSnapshot
  /** The whole record but `id`, unknown keys included, kept and never exposed. */
  privateSnapshot: Record<string, unknown>
  renditionFiles: RenditionFile[]
}

/** Records validated before their transaction (`validateRecordAhead`), each result taken once. */
const validatedAhead = new WeakMap<object, NormalizedRecord | WarehouseError>()

/**
 * Validates a record now, so that `normalizeRecord` of this same object, unchanged, later returns
 * (or throws) the result at once: an import validates a batch while the one before it is written.
 */
export function validateRecordAhead(record: EntityRecord): void {
  try {
    validatedAhead.set(record, normalizeRecord(record))
  } catch (error) {
    if (!(error instanceof WarehouseError)) throw error
    validatedAhead.set(record, error)
  }
}

/** Validates a warehouse record and derives the stable public text and rendition ids. */
export function normalizeRecord(input: unknown): NormalizedRecord {
  const ahead = typeof input === 'object' && input !== null ? validatedAhead.get(input) : undefined
  if (ahead !== undefined) {
    validatedAhead.delete(input as object)
    if (ahead instanceof WarehouseError) throw ahead
    return ahead
  }
  checkStorable(input)
  const parsed = recordInput.safeParse(input)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const path = issue.path.length > 0 ? issue.path.join('.') + ': ' : ''
    throw new WarehouseError('invalid_record', `${path}${issue.message}`)
  }
  const record = parsed.data as EntityRecord & z.infer<typeof recordInput>
  // As given, keys in its order (the parse puts known keys first): the same line imported again
  // then stringifies to the stored text, a cheap comparison (see isStoredRecord).
  const { id, ...privateSnapshot } = input as EntityRecord
  const snapshot = { texts: [] } as unknown as PublicSnapshot
  const publicFields = snapshot as unknown as Record<string, string>
  for (const field of ['type', ...ATTRIBUTE_FIELDS] as const) {
    const value = record[field]
    if (typeof value === 'string') publicFields[field] = value
  }
  const renditionFiles: RenditionFile[] = []
  const seenIds = new Set<string>()
  const claim = (publicId: string) => {
    if (seenIds.has(publicId)) throw new WarehouseError('invalid_record', `texts: the id ${publicId} occurs twice`)
    seenIds.add(publicId)
  }
  snapshot.texts = (record.texts ?? []).map((text, textIndex): StoredText => {
    const textId = text.textId ?? publicId('txt', id, text.localUrl ?? `#${textIndex}`)
    claim(textId)
    const renditions = text.renditions.map(({ file, ...rendition }, renditionIndex): StoredRendition => {
      const renditionId =
        rendition.renditionId ?? publicId('rnd', textId, `${rendition.conversion}\n${rendition.filename}`)
      claim(renditionId)
      if (file !== undefined) renditionFiles.push({ renditionId, file, textIndex, renditionIndex })
      return { ...rendition, renditionId }
    })
    return { ...text, textId, renditions }
  })
  const publicBytes = bytesOver(JSON.stringify(snapshot), RECORD_LIMITS.publicSnapshotBytes)
  if (publicBytes !== null) {
    throw new WarehouseError(
      'invalid_record',
      `its public fields and texts are ${publicBytes} bytes as JSON; at most ${RECORD_LIMITS.publicSnapshotBytes} are published per entity`,
    )
  }
  return { id, snapshot, privateSnapshot, renditionFiles }
}

/**
 * A stable public id: the same warehouse record imported twice gets the same ids. Hashed in pure JS
 * (synchronous, on every runtime), where Web Crypto would make validation asynchronous.
 */
function publicId(prefix: 'txt' | 'rnd', scope: string, key: string): string {
  return `${prefix}_${bytesToHex(sha256(utf8ToBytes(`${scope}\n${key}`))).slice(0, 32)}`
}
