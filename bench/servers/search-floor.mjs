// The floor of search (`search-cost.mjs`): what a user could write in thirty lines over SQLite's own
// full-text index. node:http and better-sqlite3 over an FTS5 table of the entities' titles and names,
// and texts when they have some (`search-cost.mjs` builds it next to the registry's data), answering the lexical half of
// `/v1/search?q=…`: any of the query's words (FTS5's `OR`), ranked by `bm25()`, `type:` and
// `jurisdiction:` matched as tokens of a column of their own, up to 100 results as JSON (ids and
// titles). No authentication, no validation: the bench only sends what it serves.
// Usage: node search-floor.mjs <the FTS5 file>; prints "listening on <url>".
import { createServer } from 'node:http'
import Database from 'better-sqlite3'

const db = new Database(process.argv[2], { readonly: true })
// Columns id, title, name, qualifiers, and with texts text: the qualifiers' tokens are for matching, not ranking.
const weights = db.pragma('table_info(search)').map(({ name }) => (name === 'id' || name === 'qualifiers' ? 0 : 1))
const statement = db.prepare(`SELECT id, title FROM search WHERE search MATCH ? ORDER BY bm25(search, ${weights.join(', ')}) LIMIT 100`)
const QUALIFIED = ['type', 'jurisdiction']
const tokensOf = (text) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/** `q` → its rows: any of the words (each quoted, FTS5's syntax kept out), and every qualifier's token. */
function search(q) {
  const words = []
  const qualifiers = []
  for (const term of q.split(/\s+/).filter(Boolean)) {
    const [, field, value] = /^(\w+):(\S+)$/.exec(term) ?? []
    if (QUALIFIED.includes(field)) qualifiers.push(`qualifiers:"${field}${tokensOf(value).join('')}"`)
    else words.push(...tokensOf(term))
  }
  if (words.length === 0) return []
  return statement.all([`(${words.map((word) => `"${word}"`).join(' OR ')})`, ...qualifiers].join(' AND '))
}

const server = createServer((request, response) => {
  const body = JSON.stringify({ data: search(new URL(request.url, 'http://floor').searchParams.get('q') ?? '') })
  response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body)
})
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
console.log(`listening on http://127.0.0.1:${server.address().port}`)
