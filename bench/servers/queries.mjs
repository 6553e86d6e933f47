// The queries the hand-written servers share: one prepared statement a request kind, over the
// registry's own tables (better-sqlite3 over the SQLite file, or named prepared statements through a
// `pg` Pool of 10, as `pg.Pool`'s default and so the registry's).
import { join } from 'node:path'

const ENTITY = 'SELECT id, type, state, merged_into, snapshot FROM entities'
const PAGE = `SELECT id, type, snapshot FROM entities WHERE state = 'canonical'`
/** The feed head read with the page, as the contract's `Change-Feed-Head` asks. */
const HEAD = '(SELECT max(seq) FROM changes) AS head'
/** The queries of both back ends, with their parameters in order; `?` becomes `$n` on PostgreSQL. */
const QUERIES = {
  page: `${PAGE} AND id > ? ORDER BY id LIMIT ?`,
  filtered: `${PAGE} AND type = ? AND jurisdiction = ? AND id > ? ORDER BY id LIMIT ?`,
  pageWithHead: `SELECT id, type, snapshot, ${HEAD} FROM entities WHERE state = 'canonical' AND id > ? ORDER BY id LIMIT ?`,
  filteredWithHead: `SELECT id, type, snapshot, ${HEAD} FROM entities WHERE state = 'canonical' AND type = ? AND jurisdiction = ? AND id > ? ORDER BY id LIMIT ?`,
  entity: `${ENTITY} WHERE id = ?`,
  changes: `SELECT seq, entity_id, change_type, snapshot FROM changes WHERE seq > ? AND type = ? AND jurisdiction = ? ORDER BY seq LIMIT ?`,
}

/** Per query name, `(...values) => rows` (an array, or a promise of one), over `data`'s SQLite file or `database`. */
export async function openQueries(data, database) {
  if (database === undefined) {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(join(data, 'registry.sqlite'), { readonly: true })
    return Object.fromEntries(
      Object.entries(QUERIES).map(([name, text]) => {
        const statement = db.prepare(text)
        return [name, (...values) => statement.all(...values)]
      }),
    )
  }
  const { default: pg } = await import('pg')
  const pool = new pg.Pool({ connectionString: database, max: 10 })
  return Object.fromEntries(
    Object.entries(QUERIES).map(([name, text]) => {
      let n = 0
      const query = { name, text: text.replace(/\?/g, () => `$${++n}`) }
      return [name, async (...values) => (await pool.query({ ...query, values })).rows]
    }),
  )
}

/** `type:T jurisdiction:J` as the bench sends it: [T, J]. */
export const typeAndJurisdiction = (filter) => filter.split(' ').map((qualifier) => qualifier.split(':')[1])
