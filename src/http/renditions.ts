import { createReadBuffers } from '../blobs/read-buffers.js'
import { blobKeyOf } from '../contract/content-key.js'
import { RENDITION_ID_PATTERN } from '../contract/ids.js'
import type { BlobStore, ByteRange } from '../ports/blob-store.js'
import type { RequestContext } from './context.js'
import { requireEntityId, resolveEntity } from './entities.js'
import { HttpError } from './errors.js'
import { extensionOf } from '../contract/extension.js'
import type { Answer } from './answer.js'
import { checkParameters } from './query.js'

/**
 * Downloads up to this size are read whole (`BlobStore.read`) and sent in one write, as a
 * hand-written server would; larger ones are streamed. Not 1 MiB: 1,000 clients that stop reading
 * (each taking a MiB into the kernel's buffers, so that each answer is sent and the next read whole)
 * made a GB of buffers pass through the process, and its peak grew by 150 MB before the collector
 * caught up.
 */
const WHOLE_DOWNLOAD_LIMIT = 512 * 1024

/**
 * The buffers downloads are read whole into, reused once the answer has gone (`Answer.sent`): a
 * client that stops reading keeps its buffer, so past 32 MiB taken a download streams instead, and
 * 1,000 stalled downloads hold 32 MB of whole answers, not 1 GB. Up to 8 MiB of them stay for the
 * next downloads (a buffer made afresh for each one cost a download 70 to 120 % more CPU, `ReadBuffers`).
 */
const READ_BUFFERS = createReadBuffers({ limit: 32 * 1024 * 1024, keep: 8 * 1024 * 1024 })

const RENDITION_FILE = /^(rnd_[^.]*)\.([a-z0-9]+)$/

/** GET /v1/entities/{id}/renditions/{renditionId}.{extension}: the bytes, streamed, with Range. */
export async function downloadRendition({ request, url, params, store, blobs, head }: RequestContext): Promise<Answer> {
  checkParameters(url, [])
  const entityId = requireEntityId(params.id)
  const [, renditionId = params.file ?? '', extension] = RENDITION_FILE.exec(params.file ?? '') ?? []
  if (!RENDITION_ID_PATTERN.test(renditionId)) {
    throw new HttpError('invalid_id', 'the rendition id must match rnd_ and 32 lowercase hex digits', 'renditionId')
  }
  const entity = await resolveEntity(store, entityId)
  const rendition = entity.snapshot.texts.flatMap((text) => text.renditions).find((r) => r.renditionId === renditionId)
  const info = rendition && extensionOf(rendition) === extension ? await blobs?.stat(blobKeyOf(rendition)) : null
  if (!rendition || !info) throw new HttpError('not_found', `rendition ${renditionId} of entity ${entityId} was not found`)

  // Content-addressed bytes have their hash for a strong validator, the same from every store.
  const etag = `"${rendition.sha256 ?? info.version}"`
  const headers: Record<string, string> = {
    'Content-Type': rendition.mime,
    'Content-Disposition': contentDisposition(rendition.filename),
    'Accept-Ranges': 'bytes',
    ETag: etag,
    ...safetyHeaders(rendition.mime),
    ...(rendition.language ? { 'Content-Language': rendition.language } : {}),
  }
  if (noneMatch(request.headers.get('If-None-Match'), etag)) {
    return { status: 304, headers: { ETag: etag }, body: null }
  }
  const range = parseRange(request.headers.get('Range'), info.size, request.headers.get('If-Range'), etag)
  if (range === 'unsatisfiable') {
    throw new HttpError('range_not_satisfiable', `the range is outside the ${info.size} bytes`, undefined, {
      'Content-Range': `bytes */${info.size}`,
    })
  }
  const status = range ? 206 : 200
  const length = range ? range.end - range.start + 1 : info.size
  headers['Content-Length'] = String(length)
  if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${info.size}`
  if (head || length === 0) return { status, headers, body: null }
  const bytes = await bytesOf(blobs!, blobKeyOf(rendition), length, range ?? undefined)
  if (!bytes) throw new HttpError('not_found', `rendition ${renditionId} of entity ${entityId} was not found`)
  return { status, headers, ...bytes }
}

/**
 * Whether `If-None-Match` names the representation (RFC 9110 13.1.2): `*` (there is one), or its
 * tag by weak comparison (`W/"…"` matches `"…"`), as a cache that revalidates may send either.
 */
function noneMatch(header: string | null, etag: string): boolean {
  return header !== null && header.split(',').some((tag) => ['*', etag, `W/${etag}`].includes(tag.trim()))
}

/** The bytes whole where they are small and a buffer is free (with how to give it back once sent), else a stream of them. */
async function bytesOf(blobs: BlobStore, key: string, length: number, range: ByteRange | undefined): Promise<Pick<Answer, 'body' | 'sent'> | null> {
  const buffer = blobs.read !== undefined && length <= WHOLE_DOWNLOAD_LIMIT ? READ_BUFFERS.take(length) : null
  if (buffer === null) {
    const stream = await blobs.get(key, range)
    return stream && { body: stream }
  }
  let held = true
  const giveBack = (reusable: boolean) => {
    if (held) READ_BUFFERS.give(buffer, reusable)
    held = false
  }
  try {
    // As a range: never more bytes than the headers said, whatever the file has become since.
    const bytes = await blobs.read!(key, range ?? { start: 0, end: length - 1 }, buffer)
    if (bytes === null) giveBack(true)
    return bytes && { body: bytes, sent: giveBack }
  } catch (error) {
    giveBack(true)
    throw error
  }
}

/**
 * One `bytes=` range (RFC 9110 14.2); several ranges, a malformed header or a stale If-Range mean
 * the whole representation, as the RFC allows.
 */
function parseRange(header: string | null, size: number, ifRange: string | null, etag: string): ByteRange | null | 'unsatisfiable' {
  if (header === null || (ifRange !== null && ifRange !== etag)) return null
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!match || (match[1] === '' && match[2] === '')) return null
  const [, first = '', last = ''] = match
  if (first === '') {
    const suffix = Number(last)
    // RFC 9110 14.1.2: a suffix range of a zero-length representation is unsatisfiable.
    if (suffix === 0 || size === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  if (start >= size) return 'unsatisfiable'
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1)
  return end < start ? null : { start, end }
}

/**
 * The browser takes the declared type as is (no sniffing a text file into HTML), and a type it would
 * run as a document (HTML, and XML, whose XHTML or SVG elements run scripts) opens in a sandbox: a
 * rendition's script cannot act on the API's origin. PDFs and images stay unsandboxed (Chromium's
 * PDF viewer refuses a sandboxed document).
 */
function safetyHeaders(mime: string): Record<string, string> {
  const essence = mime.split(';')[0]!.trim().toLowerCase()
  const active = essence === 'text/html' || essence === 'text/xml' || essence === 'application/xml' || essence.endsWith('+xml')
  return active ? { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': 'sandbox' } : { 'X-Content-Type-Options': 'nosniff' }
}

/** `inline` with an ASCII fallback name and the exact UTF-8 name (RFC 6266). */
function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_')
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `inline; filename="${fallback}"; filename*=UTF-8''${encoded}`
}
