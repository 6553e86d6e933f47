// The long-poll floor of live-feed.mjs: what a user could write over the registry's own SQLite file
// to hold long-polls of `type:person` changes and answer them all when a change commits. node:http;
// the same wake as the registry's (`PRAGMA data_version` read every 50 ms while anyone waits); one
// prepared statement reads the changes past the newest seen, once a wake, and every waiting request
// is answered the same bytes; a cursor is the change's seq. No authentication, no validation.
// `/metrics` says what live-feed.mjs reads of the registry's (requests waiting, heap, reads), and
// `/v1/entities/{id}` answers a get by id from the stored resource.
// Usage: node live-feed-floor.mjs <data dir>; prints "listening on <url>".
import Database from 'better-sqlite3'
import { createServer } from 'node:http'
import { join } from 'node:path'

const db = new Database(join(process.argv[2], 'registry.sqlite'), { readonly: true })
const changesAfter = db.prepare(
  "select seq, entity_id, change_type, snapshot from changes where seq > ? and json_extract(snapshot, '$.type') = 'person' order by seq limit 100",
)
const newestSeq = db.prepare('select max(seq) as seq from changes').pluck()
const dataVersion = db.prepare('pragma data_version').pluck()
const resourceOf = db.prepare('select resource from entities where id = ?').pluck()

let head = newestSeq.get() ?? 0
let version = dataVersion.get()
let reads = 0
/** The responses waiting for a change. */
let waiting = []

function wake() {
  reads++
  const rows = changesAfter.all(head)
  head = newestSeq.get() ?? head
  if (rows.length === 0) return
  const data = rows.map((row) => `{"type":"changes","id":"${row.seq}","attributes":{"entityId":"${row.entity_id}","changeType":"${row.change_type}","snapshot":${row.snapshot}}}`)
  const body = Buffer.from(`{"data":[${data.join(',')}],"meta":{"cursor":"${rows.at(-1).seq}"}}`)
  const answered = waiting
  waiting = []
  for (const res of answered) res.writeHead(200, ['Content-Type', 'application/vnd.api+json', 'Content-Length', String(body.length)]).end(body)
}

setInterval(() => {
  if (waiting.length === 0) return
  const now = dataVersion.get()
  if (now !== version) {
    version = now
    wake()
  }
}, 50)

createServer((req, res) => {
  const url = new URL(req.url, 'http://floor')
  if (url.pathname === '/v1/entities/changes') {
    // A cursor behind the head (or one of the registry's, at the start) is answered at the next change.
    waiting.push(res)
    res.once('close', () => {
      const at = waiting.indexOf(res)
      if (at >= 0) waiting.splice(at, 1)
    })
  } else if (url.pathname === '/metrics') {
    const { heapUsed, external } = process.memoryUsage()
    res.end(
      `entity_registry_change_feed_long_polls_waiting ${waiting.length}\nentity_registry_nodejs_heap_size_used_bytes ${heapUsed}\n` +
        `entity_registry_nodejs_external_memory_bytes ${external}\nentity_registry_store_query_duration_seconds_count{query="wake"} ${reads}\n`,
    )
  } else {
    const resource = resourceOf.get(url.pathname.slice('/v1/entities/'.length))
    res.writeHead(resource === undefined ? 404 : 200, ['Content-Type', 'application/vnd.api+json']).end(`{"data":${resource ?? 'null'}}`)
  }
}).listen(0, '127.0.0.1', function () {
  console.log(`listening on http://127.0.0.1:${this.address().port}`)
})
