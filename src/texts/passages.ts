/**
 * How a text is cut for the index: passages of `words` words, each starting `words - overlap`
 * after the last, so that words near a cut are together in one passage; at most `perEntity` of an
 * entity (about 15,000 words; the rest of a longer text is not searched).
 */
export const PASSAGES = { words: 200, overlap: 50, perEntity: 100 } as const

const WORD_RUN = /\S+/g

/** The passages of an entity's texts, in order, each of one text. */
export function passagesOf(texts: readonly string[]): string[] {
  const passages: string[] = []
  const step = PASSAGES.words - PASSAGES.overlap
  for (const text of texts) {
    const words = text.match(WORD_RUN) ?? []
    for (let start = 0; start < words.length && passages.length < PASSAGES.perEntity; start += step) {
      passages.push(words.slice(start, start + PASSAGES.words).join(' '))
      if (start + PASSAGES.words >= words.length) break
    }
  }
  return passages
}
