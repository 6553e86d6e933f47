import { extractHtml } from './html.js'
import { TEXT_LIMITS, type Extraction } from './limits.js'
import { extractPdf } from './pdf.js'
import { extractPlain } from './plain.js'

/**
 * The text of a rendition's bytes by its MIME type: HTML and XHTML, plain text (any `text/*`) and
 * PDF. Other types are skipped with the reason. Never throws: a parser's failure is a skip too.
 * Runtime-neutral; the Node composition runs it in a worker (`node/text-worker`).
 */
export async function extractText(bytes: Uint8Array, mime: string): Promise<Extraction> {
  if (bytes.length > TEXT_LIMITS.maxBytes) return { skipped: `larger than ${TEXT_LIMITS.maxBytes} bytes` }
  const [type = '', ...parameters] = mime.toLowerCase().split(';').map((part) => part.trim())
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '')
  try {
    if (type === 'text/html' || type === 'application/xhtml+xml') return extractHtml(bytes, charset)
    if (type.startsWith('text/')) return extractPlain(bytes, charset)
    if (type === 'application/pdf') return await extractPdf(bytes)
  } catch (error) {
    return { skipped: `unreadable ${type}: ${(error as Error).message}` }
  }
  return { skipped: `no text extractor for ${type || 'an unknown type'}` }
}
