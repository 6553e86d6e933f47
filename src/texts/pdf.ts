import { TEXT_LIMITS, type Extraction } from './limits.js'

/**
 * The text of a PDF, its pages in order, through `unpdf` (PDF.js packaged to run on Node, Bun, Deno
 * and in workers, with no native build), loaded at the first PDF. A PDF without text (scanned pages)
 * is skipped with the reason; one that PDF.js cannot read fails, for `extractText` to skip. Time and
 * memory are bounded by the worker that runs it (`node/text-worker`).
 */
export async function extractPdf(bytes: Uint8Array): Promise<Extraction> {
  const { extractText, getDocumentProxy } = await import('unpdf')
  // PDF.js takes the buffer it is given (it may move it to its own worker): a copy of the bytes.
  const pdf = await getDocumentProxy(bytes.slice())
  try {
    const { text } = await extractText(pdf, { mergePages: true })
    if (text.trim() === '') return { skipped: 'a PDF without text (scanned pages are not read)' }
    return { text: text.slice(0, TEXT_LIMITS.maxChars) }
  } finally {
    await pdf.loadingTask.destroy()
  }
}
