/**
 * Bounds of text extraction: a rendition past them is skipped with a warning (or its text cut),
 * never allowed to stop an import or the indexer.
 */
export const TEXT_LIMITS = {
  /** Bytes of a rendition read for its text: larger ones (100 MB of text, an archive) are skipped. */
  maxBytes: 16 * 1024 * 1024,
  /** Characters of text kept of one rendition: past them the rest is dropped (a zip-bomb-like HTML expands). */
  maxChars: 2_000_000,
  /** How long one extraction may run in a worker before it is stopped (a PDF bomb, a pathological parse). */
  timeoutMs: 10_000,
  /** Bytes looked at to tell text from binary. */
  sniffBytes: 8192,
} as const

/** What became of one rendition: its text, or why it has none. */
export type Extraction = { text: string } | { skipped: string }
