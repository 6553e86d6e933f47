import type { TextHit } from '../ports/search-index.js'

/**
 * The typed words a passage must hold to count: more than half of them. Every index may leave out
 * the passages that hold fewer (with two words, those that do not hold both: a common word beside a
 * rare one otherwise ranked every passage that holds the common one).
 */
export function passageWordsNeeded(typedWords: number): number {
  return typedWords === 0 ? 0 : Math.floor(typedWords / 2) + 1
}

/** Whether a passage must hold every typed word to count (one or two words): an index need ask for no other passages. */
export function passagesNeedEveryWord(typedWords: number): boolean {
  return passageWordsNeeded(typedWords) === typedWords
}

/**
 * Full text over entities and over their passages, as one ranking of entities: each entity at the
 * better of its rank among entities and its best passage's rank among passages' entities (BM25
 * scores of the two are not comparable: their statistics differ), an entity's own rank first on a
 * tie; it matched as many words as the better of the two matched (and `matchedInFields` says how many
 * its own fields did, when fewer), and one found by its passages only is marked `inTextsOnly`.
 */
export function withPassageText(entities: readonly TextHit[], passages: readonly TextHit[], limit: number, typedWords: number): TextHit[] {
  const best = new Map<string, { hit: TextHit; rank: number; side: number }>()
  const consider = (hits: readonly TextHit[], side: number) => {
    let rank = 0
    for (const hit of hits) {
      const known = best.get(hit.id)
      if (known?.side === side) continue
      if (known === undefined) best.set(hit.id, { hit, rank, side })
      else {
        const merged: TextHit = { ...known.hit, matched: Math.max(known.hit.matched, hit.matched), inTextsOnly: false }
        if (hit.matched > known.hit.matched) merged.matchedInFields = known.hit.matched
        best.set(hit.id, { hit: merged, rank: Math.min(known.rank, rank), side })
      }
      rank++
    }
  }
  consider(entities, 0)
  // Of the passages, those that matched the most words, and more than half of them
  // (`passageWordsNeeded`): one word anywhere in a long text is weak.
  const most = Math.max(passageWordsNeeded(typedWords), ...passages.map((hit) => hit.matched))
  consider(passages.filter((hit) => hit.matched === most).map((hit) => ({ ...hit, inTextsOnly: true })), 1)
  return [...best.values()]
    .map((entry, order) => ({ ...entry, order }))
    .sort((a, b) => a.rank - b.rank || a.order - b.order)
    .slice(0, limit)
    .map((entry) => entry.hit)
}

