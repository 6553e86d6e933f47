// Waiting clients of live-feed.mjs, forked by it (several processes, so that decoding thousands of
// answers at once is not one process's work): raw sockets that each write a fixed request and scan
// the bytes for the answer's end (a long-poll) or an `event: change` line (a stream), with no HTTP
// client library between. Each client notes when it heard of a change: the time the answer's last
// byte, or the event's, arrived. Messages from the parent:
//   { open: { host, port, key, path, mode, count } }  opens `count` clients (one closed opens again after 1 s)
//   { round }   forget what was heard: a commit follows
//   { collect } answer { round, heard: [time or 0 a client], failures } (sent unasked once all heard)
import { connect } from 'node:net'

const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
let heard = new Float64Array(0)
let heardCount = 0
let round = -1
let reported = true
/** Why clients failed (a socket closed, an answer not 200): none expected. */
const failures = []

const hear = (index) => {
  if (heard[index] !== 0) return
  heard[index] = now()
  if (++heardCount === heard.length) report()
}
const report = () => {
  if (reported) return
  reported = true
  process.send({ round, heard: [...heard], failures: failures.splice(0) })
}

process.on('message', async (message) => {
  if (message.round !== undefined && message.collect === undefined) {
    round = message.round
    heard.fill(0)
    heardCount = 0
    reported = false
  } else if (message.collect) report()
  else if (message.open) {
    const { count } = message.open
    heard = new Float64Array(count)
    for (let index = 0; index < count; index++) {
      ;(message.open.mode === 'stream' ? streamer : longPoller)(index, message.open)
      // Opened in bursts, so that the listen backlog keeps up.
      if (index % 100 === 99) await sleep(100)
    }
  } else if (message.stop) process.exit(0)
})

const requestOf = ({ host, port, key, path }, extra = '') => Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${key}\r\n${extra}\r\n`, 'latin1')

/** A stream: one request, then every chunk scanned for the event (the tail of the last kept, in case one is split). */
function streamer(index, target) {
  const socket = connect(target.port, target.host)
  socket.setNoDelay(true)
  socket.write(requestOf(target, 'Accept: text/event-stream\r\n'))
  let tail = ''
  socket.on('data', (chunk) => {
    const text = tail + chunk.latin1Slice(0, chunk.length)
    if (text.includes('event: change')) hear(index)
    tail = text.slice(-16)
  })
  let error = ''
  socket.on('error', (cause) => (error = ` (${cause.code})`))
  socket.once('close', () => {
    failures.push(`stream closed${error}`)
    setTimeout(() => streamer(index, target), 1000)
  })
}

/** A long-poll: the request at the client's cursor, again as soon as it is answered, on one connection. */
function longPoller(index, target, cursor = /page\[after\]=([^&]*)/.exec(target.path)[1]) {
  const ask = () => socket.write(requestOf({ ...target, path: target.path.replace(/page\[after\]=[^&]*/, `page[after]=${cursor}`) }))
  let chunks = []
  let length = 0
  let bodyStart = -1
  let bodyLength = 0
  let failed = false
  const socket = connect(target.port, target.host)
  socket.setNoDelay(true)
  ask()
  socket.on('data', (chunk) => {
    chunks.push(chunk)
    length += chunk.length
    for (;;) {
      const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length)
      chunks = [bytes]
      if (bodyStart < 0) {
        const end = bytes.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = bytes.latin1Slice(0, end)
        const status = Number(head.slice(9, 12))
        bodyStart = end + 4
        bodyLength = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
        if (status !== 200) failures.push(`answered ${status}`)
        failed = status !== 200
      }
      if (length < bodyStart + bodyLength) return
      const body = bytes.latin1Slice(bodyStart, bodyStart + bodyLength)
      const rest = bytes.subarray(bodyStart + bodyLength)
      chunks = rest.length > 0 ? [rest] : []
      length = rest.length
      bodyStart = -1
      if (failed) {
        setTimeout(ask, 1000)
        return
      }
      if (!body.includes('"data":[]')) hear(index)
      const at = body.lastIndexOf('"cursor":"')
      if (at >= 0) cursor = body.slice(at + 10, body.indexOf('"', at + 10))
      ask()
      if (length === 0) return
    }
  })
  let error = ''
  socket.on('error', (cause) => (error = ` (${cause.code})`))
  socket.once('close', () => {
    failures.push(`long-poll connection closed${error}`)
    setTimeout(() => longPoller(index, target, cursor), 1000)
  })
}
