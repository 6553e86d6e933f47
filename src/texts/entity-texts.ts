import { blobKeyOf } from '../contract/content-key.js'
import type { PublicSnapshot, StoredRendition } from '../contract/entity.js'
import type { BlobStore } from '../ports/blob-store.js'
import { TEXT_LIMITS, type Extraction } from './limits.js'

/** Extracts a rendition's text; the Node composition's runs in a worker (`node/text-worker`). */
export type TextExtractor = (bytes: Uint8Array, mime: string) => Promise<Extraction>

/** The extracted texts of an entity, one a text of its snapshot that has any. */
export type EntityTexts = (snapshot: PublicSnapshot) => Promise<string[]>

export interface EntityTextsOptions {
  /** Where the renditions' bytes are, and where their extracted text is kept. */
  blobs: BlobStore
  /** Default: `extractText` in this thread (loaded at the first rendition: the HTML parser is no part of serving). */
  extract?: TextExtractor
  /** Told of each rendition skipped, and why; default nothing. */
  warn?: (message: string) => void
}

/**
 * The blob key of the text extracted from bytes with this hash. Kept in the blob store beside the
 * bytes, content-addressed as they are: equal bytes are extracted once, a reindex or a rebuilt index
 * reads the text instead of extracting again, every instance sharing the blobs shares it, and no
 * store needs a new table. The version changes when extraction does, so texts are extracted anew.
 * A skipped rendition keeps an empty text, so a hostile file is tried once.
 */
export const extractedTextKey = (sha256: string) => `extracted-text-v1-${sha256}`

/**
 * Reads the texts of an entity for the index: for each text, the first of its renditions that
 * extraction reads (an HTML and a PDF of one document are not read twice). A rendition that is
 * too large or unreadable is skipped with a warning (one with no bytes here, silently) and never throws.
 */
export function createEntityTexts({ blobs, extract = async (bytes, mime) => (await import('./extract.js')).extractText(bytes, mime), warn = () => {} }: EntityTextsOptions): EntityTexts {
  async function textOf(rendition: StoredRendition): Promise<string> {
    const cacheKey = rendition.sha256 === undefined ? undefined : extractedTextKey(rendition.sha256)
    if (cacheKey !== undefined) {
      const cached = await readAll(blobs, cacheKey)
      if (cached !== null) return new TextDecoder().decode(cached)
    }
    const extraction = await extractionOf(rendition)
    if (extraction === null) return ''
    if ('skipped' in extraction) warn(`the text of rendition ${rendition.renditionId} (${rendition.filename}) is not searched: ${extraction.skipped}`)
    const text = 'text' in extraction ? extraction.text : ''
    if (cacheKey !== undefined) await blobs.put(cacheKey, new TextEncoder().encode(text))
    return text
  }

  /** Null for a rendition with no bytes here (one known by its URL only): there is nothing to read, nor to keep. */
  async function extractionOf(rendition: StoredRendition): Promise<Extraction | null> {
    const key = blobKeyOf(rendition)
    const info = await blobs.stat(key)
    if (info === null) return null
    if (info.size > TEXT_LIMITS.maxBytes) return { skipped: `larger than ${TEXT_LIMITS.maxBytes} bytes` }
    const bytes = await readAll(blobs, key)
    if (bytes === null) return null
    return extract(bytes, rendition.mime).catch((error: unknown) => ({ skipped: (error as Error).message }))
  }

  return async (snapshot) => {
    const texts: string[] = []
    for (const text of snapshot.texts) {
      for (const rendition of text.renditions) {
        const extracted = await textOf(rendition).catch((error: unknown) => {
          warn(`the text of rendition ${rendition.renditionId} is not searched: ${(error as Error).message}`)
          return ''
        })
        if (extracted.trim() !== '') {
          texts.push(extracted)
          break
        }
      }
    }
    return texts
  }
}

async function readAll(blobs: BlobStore, key: string): Promise<Uint8Array | null> {
  if (blobs.read) return blobs.read(key)
  const stream = await blobs.get(key)
  return stream === null ? null : new Uint8Array(await new Response(stream).arrayBuffer())
}
