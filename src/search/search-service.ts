import type { StoredEntity } from '../contract/entity.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { GffsQuery, TextTerm } from '../gffs/types.js'
import type { Embedder } from '../ports/embedder.js'
import { GET_ENTITIES_LIMIT, type EntityStore, type ListedEntity } from '../ports/entity-store.js'
import type { ScoredHit, SearchIndex, TextHit, TextQuery } from '../ports/search-index.js'
import { bestFirst } from './bm25.js'
import { withNicknames, type Nicknames } from './nicknames.js'
import { placeAndRoleOf, placeQueryOf } from './places.js'
import { containsPhrase, fullTextOf, matchesWord, namesOf, queryWord, queryWords, tokenize, trigramsOf } from './text.js'
import { relativesOf, type WordRelatives } from './word-relatives.js'

/** Results a search answers at most (spec 8). */
export const SEARCH_LIMIT = 100
/** Results read from the store at least, after the first read: a few left out do not cost a read each. */
const MORE_LOOKED_UP = 25
/** Reciprocal-rank fusion's k (Cormack et al.; Elasticsearch's and LanceDB's default). */
const RRF_K = 60
/** Above any sum of reciprocal ranks: what matched every typed word comes first. */
const ALL_WORDS = 1
/**
 * How much the full-text side's reciprocal rank counts against the semantic side's. Among partial
 * matches, BM25 knows which matched word is rare (`judiciary`, not `senate`, in `senate judiciary
 * committee`), which the semantic side does not see. Measured on the relevance set before passages
 * (nDCG@10 of concept queries, of paraphrases): 1 gives 0.977 and 0.604, 2 0.982 and 0.604, 3 0.983
 * and 0.600.
 */
const TEXT_WEIGHT = 2
/**
 * What a match in an entity's texts only weighs against one in its own fields (a field boost, as a
 * title's over a body's). Such a match counts only when it holds more than half the typed words:
 * a word or two found somewhere in a long text are weak (`drug` of `drug smuggling` in a Medicare
 * law); it comes first (`ALL_WORDS`) only when it holds every typed word, two or more, and no
 * entity's own fields hold them all: one word (`schools`, `military` in a health care law) is
 * weak, and a query that names entities (`house agriculture committee`) asks for them, not for the
 * bills that mention them. Measured on the relevance set with texts (nDCG@10 of paraphrases,
 * concepts, texts): 0.5 gave 0.574, 0.978, 0.909; 0.25 0.584, 0.981, 0.909; and leaving out
 * matches of half the words or fewer, 0.605, 0.981, 0.909 (of fewer than every word: texts 0.818).
 * Where an entity's own fields hold every typed word, the query names it, and a texts-only match
 * weighs half that again (`oversight government reform`: the laws that mention the committee came
 * before the other chamber's; concepts 0.985 to 0.988, the rest unchanged).
 */
const IN_TEXTS_ONLY = 0.25
/**
 * The similarity floor of the semantic side, relative to the query's background: a neighbour counts
 * when it is at least `STANDOUT` more similar than the `BACKGROUND_RANK`th nearest. An absolute
 * floor cannot tell them apart: on the relevance set, paraphrases' targets lie at 0.15 to 0.39 and
 * the best of queries that nothing answers at 0.18 to 0.48; but those stand out from a flat crowd
 * and these do not (`Napoleon Bonaparte`: 0.27 first, 0.26 tenth). Measured there (nDCG@10 of
 * paraphrases, results of no-answer queries): 0.06 gives 0.613 and 7.8, 0.07 0.604 and 6.7, 0.08
 * 0.569 and 5.4; no floor, 0.679 and 100.
 */
const BACKGROUND_RANK = 50
const STANDOUT = 0.07

export interface Search {
  /** The entities for a parsed `q`, best first: at most 100, canonical, current. */
  search(query: GffsQuery): Promise<ListedEntity[]>
  /** How many changes of the feed the index has not applied yet (0 when current). */
  lag(): Promise<number>
}

export interface SearchOptions {
  index: SearchIndex
  embedder: Embedder
  /** How many changes of the store's feed the index has not applied (`indexer.lag`); default 0. */
  lag?: () => Promise<number>
  /** Given names' other forms (`loadNicknames()` of `entity-registry/node`): `Joe Biden` finds Joseph Biden. */
  nicknames?: Nicknames
  /**
   * Words' WordNet relatives (`loadWordRelatives()` of `entity-registry/node`): a query whose words
   * no entity's own fields hold is searched by their relatives too (`military` finds Armed Services).
   */
  relatives?: WordRelatives
  /**
   * Whether a query that names a US state or territory (by name, nickname, demonym, or postal code
   * beside a role word: `Buckeye State senators`, `TX senator`) ranks its people higher, those of
   * the role asked for first (`places.ts`); default true.
   */
  places?: boolean
}

/**
 * Hybrid search. Qualifiers prefilter both rankings; positive words and phrases rank by BM25 and by
 * vector similarity, fused by reciprocal rank where exact matches come first (`fuse`); excluded words and
 * phrases remove every entity whose indexed text holds them, from the fused list. Qualifiers alone
 * list up to 100 matching entities in id order, from the store itself.
 */
export function createSearch(store: EntityStore, options: SearchOptions): Search {
  const { index, embedder } = options
  const nicknames: Nicknames = options.nicknames ?? new Map()
  return {
    lag: options.lag ?? (async () => 0),
    async search(query) {
      const positive = query.text.filter((term) => !term.negated)
      const excluded = query.text.filter((term) => term.negated).map((term) => tokenize(term.text)).filter((tokens) => tokens.length > 0)
      if (positive.length === 0) return withoutExcluded(store, await listInIdOrder(store, query), excluded)
      const text = textQueryOf(positive, nicknames)
      const depth = SEARCH_LIMIT + 50 * excluded.length
      const textRanking = text.words.length + text.phrases.length > 0 ? index.fullText(text, query.qualifiers, depth) : Promise.resolve([])
      // Without vectors (`--embedder none`) there are no nearest to leave out.
      const personNamed = embedder.dimensions === 0 ? Promise.resolve(false) : textRanking.then((hits) => namesAPerson(store, text, hits))
      const neighboursOfQuery = async () => {
        const [vector] = await embedder.embed([positive.map((term) => term.text).join(' ')])
        return vector!.some((value) => value !== 0) ? index.nearest(vector!, query.qualifiers, Math.max(depth, BACKGROUND_RANK)) : []
      }
      // An index that ranks in this process is asked for the nearest only where full text says they
      // count (its calls cost CPU here, not a wait); another is asked both at once, and the nearest
      // left out alike, so that every index answers the same.
      const meaningRanking = index.ranksInProcess === true ? personNamed.then((named) => (named ? [] : neighboursOfQuery())) : neighboursOfQuery()
      const [byText, named, neighbours, byPlace] = await Promise.all([
        textRanking,
        personNamed,
        meaningRanking,
        options.places === false ? Promise.resolve([]) : placeRanking(index, positive, query.qualifiers, depth, nicknames),
      ])
      // Whether the words' relatives are searched depends on what the words themselves found.
      const byRelatives = options.relatives === undefined ? [] : await relativesRanking(index, text, byText, query.qualifiers, depth, options.relatives)
      // Equal vectors (the vice presidents' embedded texts are one text) tie: each index orders them
      // its own way (pgvector in none), so they are put in id order here, alike in every index.
      const byMeaning = named ? [] : standingOut(neighbours.sort(bestFirst)).slice(0, depth)
      const fused = fuse(byText, byMeaning, text.words.length, byRelatives, byPlace)
      const ranked: StoredEntity[] = []
      // The fused list holds up to twice the results answered: the store reads the best first, as
      // many as are missing (a few more past the first read), and reads on only for those that the
      // check below leaves out.
      for (let start = 0; start < fused.length && ranked.length < SEARCH_LIMIT; ) {
        const ids = fused.slice(start, (start += Math.max(SEARCH_LIMIT - ranked.length, MORE_LOOKED_UP)))
        const found = new Map((await entitiesByIds(store, ids)).map((entity) => [entity.id, entity]))
        for (const id of ids) {
          const entity = found.get(id)
          // The store is the truth: an entity the index has not caught up with yet is checked here.
          if (entity?.state !== 'canonical' || !matchesQualifiers(query.qualifiers, entity.snapshot) || holdsAny(entity, excluded)) continue
          ranked.push(entity)
          if (ranked.length === SEARCH_LIMIT) break
        }
      }
      return ranked
    },
  }
}

/**
 * Full text over the typed words' WordNet relatives, where full text finds no typed word in an
 * entity's own fields, nor more than half of two or more words in a text (what `fuse` counts of a
 * text, but for one word found somewhere in a long text, which is weak): the words are then not the data's
 * (`military`, `spies`, `elderly`), and their relatives may be (`armed services`, `intelligence`,
 * `aging`). Only own-field matches: a relative found somewhere in a long text is weaker still than
 * a typed word found there.
 */
async function relativesRanking(index: SearchIndex, text: TextQuery, byText: TextHit[], qualifiers: GffsQuery['qualifiers'], depth: number, relatives: WordRelatives): Promise<ScoredHit[]> {
  const words = text.words.length
  if (words === 0 || byText.some((hit) => !hit.inTextsOnly || (words >= 2 && hit.matched / words > 0.5))) return []
  const related = relativesOf(text.words.map((word) => word.token), relatives)
  if (related.length === 0) return []
  return (await index.fullText({ words: related, phrases: [] }, qualifiers, depth)).filter((hit) => !hit.inTextsOnly)
}

/**
 * Full text for the people of the places a query names (`placeAndRoleOf`), of the role asked for
 * (`placeQueryOf`), under a prefilter on their jurisdiction, the query's own qualifiers kept: those
 * that match the most of the words. Own-field hits only. A ranking fused as a full-text one counts, never a filter: the typed
 * words' hits stay, and what matches every typed word still comes first.
 */
async function placeRanking(index: SearchIndex, positive: readonly TextTerm[], qualifiers: GffsQuery['qualifiers'], depth: number, givenNames: Nicknames): Promise<ScoredHit[]> {
  const found = placeAndRoleOf(positive.map((term) => term.text).join(' '), givenNames)
  if (found === null) return []
  const { words, jurisdiction } = placeQueryOf(found)
  const hits = (await index.fullText({ words, phrases: [] }, [...qualifiers, jurisdiction], depth)).filter((hit) => !hit.inTextsOnly)
  // Those that hold the most of what was asked (the district's member, not the state's other
  // members), whatever BM25 makes of a word that most entities hold (`representative`): a rank
  // apart is too little to tell them from the others once fused.
  const most = Math.max(0, ...hits.map((hit) => hit.matched))
  return hits.filter((hit) => hit.matched === most)
}

/**
 * Whether the query names a person: two words or more (no phrase), which the best full-text hit
 * matched all of, and it is a person whose names (`namesOf`) hold each of them, as typed, as
 * another form of a given name, with a typo, or as a part. Such a query is searched without the
 * semantic side: a person's vector embeds no name (`embeddedTextOf`), so the nearest to a name's
 * words (`Nancy Pelosi`: the committees she sat on) are other entities that only share a word's
 * sense. One word is not enough: a surname is often a word too, and `banks` asks for the banking
 * committees as much as for Jim Banks (nDCG@10 0.85 with them, 0.39 without; bench/README.md).
 */
async function namesAPerson(store: EntityStore, text: TextQuery, byText: readonly TextHit[]): Promise<boolean> {
  const best = byText[0]
  if (best === undefined || best.inTextsOnly === true || text.phrases.length > 0 || text.words.length < 2 || best.matched < text.words.length) return false
  const entity = await store.getEntity(best.id)
  if (entity?.snapshot.type !== 'person') return false
  const names = namesOf(entity.snapshot)
  // The names' trigrams as every index makes them (`textScorer`, LanceDB's hits): of the names joined.
  const grams = new Set(trigramsOf(names.join(' ')))
  return text.words.every((word) => matchesWord(word, [], names, grams))
}

/** The neighbours that stand out from the query's background similarity (see `STANDOUT`). */
function standingOut(neighbours: ScoredHit[]): ScoredHit[] {
  const background = neighbours[Math.min(BACKGROUND_RANK, neighbours.length) - 1]?.score ?? 0
  return neighbours.filter((hit) => hit.score >= background + STANDOUT)
}

/**
 * Reciprocal-rank fusion (score = sum of 1 / (60 + rank)) where the semantic side cannot outrank
 * exact matches: an entity that matched every typed word comes before any that did not, and a full
 * text hit counts twice a semantic rank (`TEXT_WEIGHT`), in proportion to what it matched, so that
 * a neighbour that stands out can still come before a weak partial match; a match in an entity's
 * texts only weighs less, counts only for more than half the words, and comes first only where no
 * entity's own fields hold every word (`IN_TEXTS_ONLY`). The full-text ranking of the words' WordNet
 * relatives (`relativesRanking`) counts as a full-text rank: where they tie, a semantic rank alone
 * (the first neighbour) would come before an entity that holds the relatives (`military`: Armed
 * Services; measured on the development part, bench/README.md). The ranking of the people of the
 * places a query names (`placeRanking`) counts as a full-text rank too.
 */
export function fuse(byText: TextHit[], byMeaning: ScoredHit[], words: number, byRelatives: ScoredHit[] = [], byPlace: ScoredHit[] = []): string[] {
  const scores = new Map<string, number>()
  // The place's people (`placeRanking`) are what a query naming a place asks for, in their own fields:
  // a text that holds every typed word (`TX` and `Senator` in a bill's list of cosponsors) comes after them.
  const named = byPlace.length > 0 || byText.some((hit) => !hit.inTextsOnly && (hit.matchedInFields ?? hit.matched) >= words)
  const best = byText.find((hit) => !hit.inTextsOnly)?.score ?? 0
  byText.forEach(({ id, score, matched, inTextsOnly }, rank) => {
    const share = words === 0 ? 1 : matched / words
    if (inTextsOnly && share <= 0.5) return
    const first = share === 1 && (!inTextsOnly || (words >= 2 && !named))
    const weight = inTextsOnly ? (named ? IN_TEXTS_ONLY / 2 : IN_TEXTS_ONLY) * share : partialMatchWeight(share, score, best)
    scores.set(id, (first ? ALL_WORDS : 0) + (TEXT_WEIGHT * weight) / (RRF_K + rank + 1))
  })
  const add = (ranking: ScoredHit[], weight: number) => ranking.forEach(({ id }, rank) => scores.set(id, (scores.get(id) ?? 0) + weight / (RRF_K + rank + 1)))
  add(byRelatives, TEXT_WEIGHT)
  add(byPlace, TEXT_WEIGHT)
  add(byMeaning, 1)
  return [...scores.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id)
}

/**
 * What a match of the entities' own fields weighs: all of it when it holds every typed word, else
 * its share of the words, but no more than its BM25 score's share of the best hit's. The count of
 * words weighs `senate` as much as `judiciary` in `senate judiciary committee`; BM25 knows the rarer
 * one, and the other chamber's Judiciary committee comes before the Senate's other committees
 * (nDCG@10 of concept queries 0.982 to 0.989, paraphrases 0.619 to 0.616, on the relevance set).
 */
function partialMatchWeight(share: number, score: number, best: number): number {
  return share === 1 || best <= 0 ? share : Math.min(share, score / best)
}

/**
 * What full text looks for in the positive terms: the words of unquoted terms (any may match, with
 * typos, and as names with given names' other forms), and quoted phrases exactly.
 */
export function textQueryOf(positive: readonly TextTerm[], nicknames: Nicknames): TextQuery {
  const typed = queryWords(positive.filter((term) => term.kind === 'word').map((term) => term.text).join(' '))
  const unique = typed.filter((word, position) => typed.findIndex((other) => other.token === word.token) === position)
  const forms = withNicknames(unique.map((word) => word.name), nicknames)
  return {
    words: unique.map((word, position) => queryWord(word.token, forms[position]!, word.name)),
    phrases: positive.filter((term) => term.kind === 'phrase').map((term) => tokenize(term.text)).filter((tokens) => tokens.length > 0),
  }
}

function holdsAny(entity: StoredEntity, excluded: string[][]): boolean {
  if (excluded.length === 0) return false
  const tokens = tokenize(fullTextOf(entity.snapshot))
  return excluded.some((term) => (term.length === 1 ? tokens.includes(term[0]!) : containsPhrase(tokens, term)))
}

/** The entities whose indexed text holds no excluded word or phrase; a rendered entity is read whole for it. */
async function withoutExcluded(store: EntityStore, listed: ListedEntity[], excluded: string[][]): Promise<ListedEntity[]> {
  if (excluded.length === 0) return listed
  const rendered = await entitiesByIds(store, listed.filter((entity) => !('snapshot' in entity)).map((entity) => entity.id))
  const read = new Map(rendered.map((entity) => [entity.id, entity]))
  const entities = listed.map((entity) => ('snapshot' in entity ? entity : read.get(entity.id)))
  return entities.filter((entity): entity is StoredEntity => entity?.state === 'canonical' && !holdsAny(entity, excluded))
}

/** The entities with these ids that exist: a read a thousand where the store can (`getEntities`), else one an id. */
async function entitiesByIds(store: EntityStore, ids: readonly string[]): Promise<StoredEntity[]> {
  const { getEntities } = store
  if (getEntities === undefined) {
    const entities = await Promise.all(ids.map((id) => store.getEntity(id)))
    return entities.filter((entity): entity is StoredEntity => entity !== null)
  }
  const batches: Promise<StoredEntity[]>[] = []
  for (let start = 0; start < ids.length; start += GET_ENTITIES_LIMIT) batches.push(getEntities.call(store, ids.slice(start, start + GET_ENTITIES_LIMIT)))
  return (await Promise.all(batches)).flat()
}

/** Up to 100 matching entities in id order, following the store's pages (which may be short). */
async function listInIdOrder(store: EntityStore, query: GffsQuery): Promise<ListedEntity[]> {
  const entities: ListedEntity[] = []
  let after: string | null = null
  for (let pages = 0; pages < 20 && entities.length < SEARCH_LIMIT; pages++) {
    const page = await store.listEntities({ qualifiers: query.qualifiers, after, limit: SEARCH_LIMIT - entities.length })
    entities.push(...page.entities)
    if (!page.hasMore) break
    after = page.cursor !== undefined ? page.cursor : (page.entities.at(-1)?.id ?? after)
  }
  return entities
}
