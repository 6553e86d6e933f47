// The floor of search (`search-cost.mjs`): what a user could write in thirty lines over SQLite's own
// full-text index. node:http and better-sqlite3 over an FTS5 table of the entities' titles and names
// (`search-cost.mjs` builds it next to the registry's data), answering the lexical half of
// `/v1/search?q=…`: any of the query's words (FTS5's `OR`), ranked by `bm25()`, `type:` and
// `jurisdiction:` as a `WHERE` on the entities' indexed columns, up to 100 results as JSON (ids and
// titles). No authentication, no validation: the bench only sends what it serves.
// Usage: node search-floor.mjs <the FTS5 file>; prints "listening on <url>".
import { createServer } from 'node:http'
import Database from 'better-sqlite3'

const db = new Database(process.argv[2], { readonly: true })
const QUALIFIED = ['type', 'jurisdiction']
/** One statement a combination of qualifiers, each `?` of them after the match expression. */
const statements = new Map()
const statementOf = (fields) => {
  const key = fields.join(',')
  if (!statements.has(key)) {
    const where = fields.map((field) => ` AND e.${field} = ?`).join('')
    statements.set(key, db.prepare(`SELECT e.id, e.title FROM search JOIN entities e ON e.rowid = search.rowid WHERE search MATCH ?${where} ORDER BY rank LIMIT 100`))
  }
  return statements.get(key)
}

/** `q` → its rows: the words quoted (FTS5's syntax kept out), joined by `OR`; qualifiers as equalities. */
function search(q) {
  const words = []
  const qualifiers = {}
  for (const term of q.split(/\s+/).filter(Boolean)) {
    const [, field, value] = /^(\w+):(\S+)$/.exec(term) ?? []
    if (QUALIFIED.includes(field)) qualifiers[field] = value
    else words.push(...(term.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []))
  }
  if (words.length === 0) return []
  const fields = QUALIFIED.filter((field) => field in qualifiers)
  return statementOf(fields).all(words.map((word) => `"${word}"`).join(' OR '), ...fields.map((field) => qualifiers[field]))
}

const server = createServer((request, response) => {
  const body = JSON.stringify({ data: search(new URL(request.url, 'http://floor').searchParams.get('q') ?? '') })
  response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body)
})
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
console.log(`listening on http://127.0.0.1:${server.address().port}`)
