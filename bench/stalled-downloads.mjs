// Resident memory of a serving process while 1,000 clients download a rendition and never read:
// `entity-registry serve` over the demo data and one bill with renditions of 512 KiB (the largest read
// whole), 1 MiB and 16 MiB (streamed), each asked for as a range (`bytes=1-`). RSS idle, each second with
// the downloads open, and after the clients close them, with the server's connections still open
// (`ss`), twice; then the same with `--send-timeout 5`, where the server closes them itself. Linux only.
// After closing, RSS each second for --settle seconds: 3 s after, and once the process has been quiet that long.
//   node bench/stalled-downloads.mjs [--clients 1000] [--seconds 12] [--settle 30] [--only 16 (MiB; 0.5 for 512 KiB)] [--blobs s3://bucket/prefix (with the AWS environment)]
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { KEY, machine, ROOT, startServer } from './lib.mjs'

const { values: options } = parseArgs({ options: { clients: { type: 'string', default: '1000' }, seconds: { type: 'string', default: '12' }, settle: { type: 'string', default: '30' }, only: { type: 'string' }, blobs: { type: 'string' } } })
const CLIENTS = Number(options.clients)
const MB = 1024 * 1024
const SIZES = [0.5 * MB, 1 * MB, 16 * MB]
const CLI = join(ROOT, 'dist/cli/main.js')
const blobs = options.blobs ? ['--blobs', options.blobs] : []
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A data directory with the demo data and the bill `large`, with a rendition of each size. */
function dataDirectory() {
  const data = mkdtempSync(join(tmpdir(), 'er-stalled-'))
  const renditions = SIZES.map((size) => {
    writeFileSync(join(data, `${size}.html`), Buffer.alloc(size, '<p>a large rendition</p>\n'))
    return { conversion: 'original', language: 'en', mime: 'text/html', filename: `${size}.html`, file: `${size}.html` }
  })
  const record = { id: 'large', type: 'legislation', title: 'A large bill', texts: [{ type: 'information', mime: 'text/html', renditions }] }
  writeFileSync(join(data, 'large.ndjson'), `${JSON.stringify(record)}\n`)
  for (const file of [join(ROOT, 'demo/entities.jsonl'), join(data, 'large.ndjson')]) {
    const imported = spawnSync(process.execPath, [CLI, 'import', file, '--data', join(data, 'registry'), ...blobs], { encoding: 'utf8' })
    if (imported.status !== 0) throw new Error(imported.stderr)
  }
  return data
}

async function run(data, size, extraArgs) {
  const server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--data', join(data, 'registry'), '--search', 'none', '--api-key', KEY, '--rate-limit', '0', ...blobs, ...extraArgs])
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024
  try {
    const entity = await (await fetch(`${server.url}/v1/entities/large`, { headers: { Authorization: `Bearer ${KEY}` } })).json()
    const content = new URL(entity.data.attributes.texts[0].renditions[SIZES.indexOf(size)].links.content)
    // Warm: the first download loads what every download uses.
    await (await fetch(content, { headers: { Authorization: `Bearer ${KEY}` } })).arrayBuffer()
    await sleep(1000)
    const idle = rss()
    // The server's side of the connections still open.
    const established = () => spawnSync('ss', ['-Htn', 'state', 'established', `( sport = :${content.port} )`], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).length
    const request = `GET ${content.pathname} HTTP/1.1\r\nHost: ${content.host}\r\nAuthorization: Bearer ${KEY}\r\nRange: bytes=1-\r\n\r\n`
    /** One burst of stalled downloads: RSS and connections each second, then RSS after the clients closed them. */
    const burst = async () => {
      const sockets = []
      for (let index = 0; index < CLIENTS; index++) {
        const socket = connect(Number(content.port), content.hostname)
        // Never read: what the server sends waits in the kernel's buffers, then in the server.
        socket.pause()
        socket.on('error', () => undefined)
        socket.write(request)
        sockets.push(socket)
      }
      const open = []
      const connections = []
      for (let second = 0; second < Number(options.seconds); second++) {
        await sleep(1000)
        open.push(rss())
        connections.push(established())
      }
      for (const socket of sockets) socket.destroy()
      const closed = []
      for (let second = 0; second < Math.max(3, Number(options.settle)); second++) {
        await sleep(1000)
        closed.push(rss())
      }
      return { open, closed, peak: Math.max(...open), after: closed[2], settled: closed.at(-1), connections }
    }
    // Twice: what the first burst leaves is kept by the allocator for the second, not grown again.
    return { idle, bursts: [await burst(), await burst()] }
  } finally {
    server.stop()
    await sleep(500)
  }
}

console.log(`machine: ${machine()}; ${CLIENTS} stalled range downloads${options.blobs ? ` from ${options.blobs}` : ' from files'}`)
const data = dataDirectory()
for (const size of SIZES.filter((size) => options.only === undefined || size === Number(options.only) * MB)) {
  for (const [name, args] of [
    ['default (send timeout 60 s)', []],
    ['--send-timeout 5', ['--send-timeout', '5']],
  ]) {
    const { idle, bursts } = await run(data, size, args)
    const mb = (value) => `${value.toFixed(0)} MB`
    console.log(`${size / MB} MiB, ${name}: idle ${mb(idle)}`)
    for (const [index, { open, closed, peak, after, settled, connections }] of bursts.entries()) {
      console.log(`  burst ${index + 1}: peak ${mb(peak)} (+${mb(peak - idle)}); 3 s after closing ${mb(after)} (+${mb(after - idle)}); ${options.settle} s after ${mb(settled)} (+${mb(settled - idle)})`)
      console.log(`    RSS each second (MB): ${open.map((value) => value.toFixed(0)).join(' ')}`)
      console.log(`    server connections open each second: ${connections.join(' ')}`)
      console.log(`    RSS each second after closing (MB): ${closed.map((value) => value.toFixed(0)).join(' ')}`)
    }
  }
}
rmSync(data, { recursive: true, force: true })
