import { TEXT_LIMITS, type Extraction } from './limits.js'

/**
 * Bytes as text in `charset` (UTF-8 unless told), or why not: binary (a NUL or many control bytes
 * where text should be), an unknown charset, or bytes invalid in UTF-8. Legacy single-byte charsets
 * decode anything, so only UTF-8 is checked strictly.
 */
export function decodeText(bytes: Uint8Array, charset = 'utf-8'): Extraction {
  if (looksBinary(bytes)) return { skipped: 'binary content' }
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(charset, { fatal: true })
  } catch {
    return { skipped: `unknown charset "${charset}"` }
  }
  try {
    return { text: decoder.decode(bytes) }
  } catch {
    return { skipped: `not valid ${decoder.encoding}` }
  }
}

/** Plain text, cut at the character bound. */
export function extractPlain(bytes: Uint8Array, charset?: string): Extraction {
  const decoded = decodeText(bytes, charset)
  return 'text' in decoded ? { text: decoded.text.slice(0, TEXT_LIMITS.maxChars) } : decoded
}

/** A NUL, or more than one in ten control bytes (not tab, newline, carriage return, form feed), in the first bytes. */
function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, TEXT_LIMITS.sniffBytes)
  let control = 0
  for (let index = 0; index < end; index++) {
    const byte = bytes[index]!
    if (byte === 0) return true
    if (byte < 32 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12) control++
  }
  return control * 10 > end
}
