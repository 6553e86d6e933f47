import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { PublicSnapshot, StoredRendition, StoredText } from '../contract/entity.js'
import { ATTRIBUTE_FIELDS } from '../contract/fields.js'
import { ENTITY_ID_PATTERN } from '../contract/ids.js'
import { renditionSchema, textSchema } from '../contract/schemas.js'
import { WarehouseError, type EntityRecord } from '../ports/warehouse.js'

/** The import form of a text: ids may be given (else derived) and a rendition may name its bytes' file. */
const renditionInput = renditionSchema.omit({ links: true }).extend({
  renditionId: renditionSchema.shape.renditionId.optional(),
  /** Import only: the path of the bytes, relative to the NDJSON file. Never exposed. */
  file: z.string().optional(),
})
const textInput = textSchema.extend({ renditions: z.array(renditionInput) })

const recordInput = z.looseObject({
  id: z.string().regex(ENTITY_ID_PATTERN, 'id must match [0-9a-z]+'),
  type: z.string().optional(),
  ...Object.fromEntries(ATTRIBUTE_FIELDS.map((field) => [field, z.string().optional()])),
  texts: z.array(textInput).optional(),
})

/** A rendition whose bytes an import must store, keyed by its public id. */
export interface RenditionFile {
  renditionId: string
  file: string
}

export interface NormalizedRecord {
  id: string
  /** What the service may expose. */
  snapshot: PublicSnapshot
  /** The whole record but `id`, unknown keys included, kept and never exposed. */
  privateSnapshot: Record<string, unknown>
  renditionFiles: RenditionFile[]
}

/** Validates a warehouse record and derives the stable public text and rendition ids. */
export function normalizeRecord(input: unknown): NormalizedRecord {
  const parsed = recordInput.safeParse(input)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const path = issue.path.length > 0 ? issue.path.join('.') + ': ' : ''
    throw new WarehouseError('invalid_record', `${path}${issue.message}`)
  }
  const record = parsed.data as EntityRecord & z.infer<typeof recordInput>
  const { id, ...privateSnapshot } = record
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
    const renditions = text.renditions.map(({ file, ...rendition }): StoredRendition => {
      const renditionId =
        rendition.renditionId ?? publicId('rnd', textId, `${rendition.conversion}\n${rendition.filename}`)
      claim(renditionId)
      if (file !== undefined) renditionFiles.push({ renditionId, file })
      return { ...rendition, renditionId }
    })
    return { ...text, textId, renditions }
  })
  return { id, snapshot, privateSnapshot, renditionFiles }
}

/** A stable public id: the same warehouse record imported twice gets the same ids. */
function publicId(prefix: 'txt' | 'rnd', scope: string, key: string): string {
  return `${prefix}_${createHash('sha256').update(`${scope}\n${key}`).digest('hex').slice(0, 32)}`
}
