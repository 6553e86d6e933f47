/** Given names and what else they are called: each name to its other forms (formal names and nicknames). */
export type Nicknames = ReadonlyMap<string, readonly string[]>

/**
 * Reads `name1,has_nickname,name2` rows (the format of assets/nicknames/names.csv): each nickname
 * leads to its formal names, and each formal name to its nicknames, so that `joe` finds Joseph and
 * `joseph` finds Joe. Nicknames of one formal name are not led to each other (`bill` is William's and
 * Robert's, which does not make Bob a Will).
 */
export function parseNicknames(csv: string): Nicknames {
  const others = new Map<string, Set<string>>()
  const add = (from: string, to: string) => {
    if (!others.has(from)) others.set(from, new Set())
    others.get(from)!.add(to)
  }
  for (const line of csv.split('\n')) {
    const [formal, relationship, nickname] = line.trim().toLowerCase().split(',')
    if (relationship !== 'has_nickname' || !formal || !nickname) continue
    add(formal, nickname)
    add(nickname, formal)
  }
  return new Map([...others].map(([name, forms]) => [name, [...forms]]))
}

/**
 * Each typed word with the other forms of it as a given name. A word is taken for a given name when
 * another word follows it (`Joe Biden`, `Bill Clinton`), so that the last word of `tax bill` or a
 * name alone stays what it is.
 */
export function withNicknames(words: readonly string[], nicknames: Nicknames): string[][] {
  return words.map((word, position) => (position < words.length - 1 ? [word, ...(nicknames.get(word) ?? [])] : [word]))
}
