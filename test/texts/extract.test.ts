import { readFileSync } from 'node:fs'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { extractText } from '../../src/texts/extract.js'
import { TEXT_LIMITS } from '../../src/texts/limits.js'

const bytes = (text: string) => new TextEncoder().encode(text)
const textOf = async (extraction: ReturnType<typeof extractText>) => {
  const result = await extraction
  if (!('text' in result)) throw new Error(`skipped: ${result.skipped}`)
  return result.text
}

describe('text extraction', async () => {
  it('reads HTML as a reader sees it: scripts, styles and markup dropped, references decoded, blocks apart', async () => {
    const html = '<html><head><title>T</title><style>p{color:red}</style></head><body><script>var secret = 1</script><p>Caf&eacute; &amp; b&#233;b&eacute;</p><p>second<br>line</p><div>one</div><div>two</div><span>in</span><b>line</b></body></html>'
    expect(await textOf(extractText(bytes(html), 'text/html'))).toBe('Café & bébé\nsecond\nline\none\ntwo\ninline')
  })

  it('reads a demo bill summary: its words, none of its markup', async () => {
    const text = await textOf(extractText(readFileSync('demo/renditions/s1-113-information.html'), 'text/html'))
    expect(text).toMatch(/immigration/i)
    expect(text).not.toMatch(/<[a-z]/i)
  })

  it('follows the charset given, else the document\'s meta, else UTF-8', async () => {
    const latin1 = Uint8Array.from([...'<p>na'].map((c) => c.charCodeAt(0)).concat([0xef, 0x76, 0x65]))
    expect(await textOf(extractText(latin1, 'text/html; charset=ISO-8859-1'))).toBe('naïve')
    const declared = Uint8Array.from([...bytes('<meta charset="windows-1252"><p>caf'), 0xe9])
    expect(await textOf(extractText(declared, 'text/html'))).toBe('café')
    expect(await textOf(extractText(bytes('plain words\n'), 'text/plain'))).toBe('plain words\n')
  })

  it('skips what is not text, with the reason: binary labelled as HTML, invalid UTF-8, an unknown charset, other types', async () => {
    expect(await extractText(Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]), 'text/html')).toEqual({ skipped: 'binary content' })
    expect(await extractText(Uint8Array.from([0x3c, 0x70, 0x3e, 0xff, 0xfe, 0x41]), 'text/html')).toEqual({ skipped: 'not valid utf-8' })
    expect(await extractText(bytes('x'), 'text/plain; charset=klingon')).toEqual({ skipped: 'unknown charset "klingon"' })
    expect(await extractText(bytes('GIF89a'), 'image/gif')).toEqual({ skipped: 'no text extractor for image/gif' })
  })

  it('bounds size: too many bytes are skipped, a document that expands is cut', async () => {
    expect(await extractText(new Uint8Array(TEXT_LIMITS.maxBytes + 1).fill(0x61), 'text/plain')).toEqual({ skipped: `larger than ${TEXT_LIMITS.maxBytes} bytes` })
    const nested = '<div>'.repeat(20_000) + 'deep' + '</div>'.repeat(20_000)
    expect(await textOf(extractText(bytes(nested), 'text/html'))).toBe('deep')
    const long = await textOf(extractText(bytes('<p>' + 'word '.repeat(TEXT_LIMITS.maxChars / 4) + '</p>'), 'text/html'))
    expect(long.length).toBeLessThanOrEqual(TEXT_LIMITS.maxChars)
  })

  it('reads the text of a PDF, page after page, and skips one it cannot read or that holds no text', async () => {
    const document = await PDFDocument.create()
    const font = await document.embedFont(StandardFonts.Helvetica)
    for (const line of ['Firearms trafficking prevention', 'Straw purchasers of firearms']) document.addPage().drawText(line, { x: 50, y: 700, font, size: 14 })
    const text = await textOf(extractText(await document.save(), 'application/pdf'))
    expect(text).toMatch(/Firearms trafficking prevention[\s\S]*Straw purchasers of firearms/)

    const blank = await PDFDocument.create()
    blank.addPage()
    expect(await extractText(await blank.save(), 'application/pdf')).toEqual({ skipped: 'a PDF without text (scanned pages are not read)' })
    const malformed = await extractText(bytes('%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage'), 'application/pdf')
    expect(malformed).toEqual({ skipped: expect.stringMatching(/^unreadable application\/pdf: /) })
  })
})
