import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { extractText } from '../../src/texts/extract.js'
import { TEXT_LIMITS } from '../../src/texts/limits.js'

const bytes = (text: string) => new TextEncoder().encode(text)
const textOf = (result: ReturnType<typeof extractText>) => {
  if (!('text' in result)) throw new Error(`skipped: ${result.skipped}`)
  return result.text
}

describe('text extraction', () => {
  it('reads HTML as a reader sees it: scripts, styles and markup dropped, references decoded, blocks apart', () => {
    const html = '<html><head><title>T</title><style>p{color:red}</style></head><body><script>var secret = 1</script><p>Caf&eacute; &amp; b&#233;b&eacute;</p><p>second<br>line</p><div>one</div><div>two</div><span>in</span><b>line</b></body></html>'
    expect(textOf(extractText(bytes(html), 'text/html'))).toBe('Café & bébé\nsecond\nline\none\ntwo\ninline')
  })

  it('reads a demo bill summary: its words, none of its markup', () => {
    const text = textOf(extractText(readFileSync('demo/renditions/s1-113-information.html'), 'text/html'))
    expect(text).toMatch(/immigration/i)
    expect(text).not.toMatch(/<[a-z]/i)
  })

  it('follows the charset given, else the document\'s meta, else UTF-8', () => {
    const latin1 = Uint8Array.from([...'<p>na'].map((c) => c.charCodeAt(0)).concat([0xef, 0x76, 0x65]))
    expect(textOf(extractText(latin1, 'text/html; charset=ISO-8859-1'))).toBe('naïve')
    const declared = Uint8Array.from([...bytes('<meta charset="windows-1252"><p>caf'), 0xe9])
    expect(textOf(extractText(declared, 'text/html'))).toBe('café')
    expect(textOf(extractText(bytes('plain words\n'), 'text/plain'))).toBe('plain words\n')
  })

  it('skips what is not text, with the reason: binary labelled as HTML, invalid UTF-8, an unknown charset, other types', () => {
    expect(extractText(Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]), 'text/html')).toEqual({ skipped: 'binary content' })
    expect(extractText(Uint8Array.from([0x3c, 0x70, 0x3e, 0xff, 0xfe, 0x41]), 'text/html')).toEqual({ skipped: 'not valid utf-8' })
    expect(extractText(bytes('x'), 'text/plain; charset=klingon')).toEqual({ skipped: 'unknown charset "klingon"' })
    expect(extractText(bytes('%PDF-1.7'), 'application/pdf')).toEqual({ skipped: 'no text extractor for application/pdf' })
  })

  it('bounds size: too many bytes are skipped, a document that expands is cut', () => {
    expect(extractText(new Uint8Array(TEXT_LIMITS.maxBytes + 1).fill(0x61), 'text/plain')).toEqual({ skipped: `larger than ${TEXT_LIMITS.maxBytes} bytes` })
    const nested = '<div>'.repeat(20_000) + 'deep' + '</div>'.repeat(20_000)
    expect(textOf(extractText(bytes(nested), 'text/html'))).toBe('deep')
    const long = textOf(extractText(bytes('<p>' + 'word '.repeat(TEXT_LIMITS.maxChars / 4) + '</p>'), 'text/html'))
    expect(long.length).toBeLessThanOrEqual(TEXT_LIMITS.maxChars)
  })
})
