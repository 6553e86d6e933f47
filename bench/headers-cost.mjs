// What the contract's response headers cost by themselves: one bare node:http server answering the
// same small body (a get by id's size) three ways, loaded in turn by autocannon (10 connections) in
// this process: the floor's two headers and its 215-byte document; the same headers and the
// registry's 314-byte document; the registry's headers (rate limit, CORS, request id) and its
// document. CPU a request is this process's (server and load generator both): read the differences.
//   node bench/headers-cost.mjs [--rounds 3] [--duration 2]
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { machine } from './lib.mjs'

const { values: options } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '2' } } })

const attributes = '{"title":"person number 123456","name":"Person 123456","displayDate":"1990-02-14","jurisdiction":"US-WA","localType":"bioguide","status":"serving","texts":[]}'
const floorBody = `{"data":{"type":"person","id":"e02n9c","attributes":${attributes}}}`
const registryBody = `{"links":{"self":"http://127.0.0.1:8712/v1/entities/e02n9c"},"data":{"type":"person","id":"e02n9c","attributes":${attributes},"links":{"self":"http://127.0.0.1:8712/v1/entities/e02n9c"}}}`
/** The headers `entity-registry serve` sends with a get by id (bench/http.mjs's rate limit). */
const registryHeaders = () => [
  'Content-Type', 'application/vnd.api+json',
  'RateLimit-Policy', '"default";q=1000000000;w=60',
  'RateLimit', '"default";r=999999999;t=1',
  'X-Content-Type-Options', 'nosniff',
  'Access-Control-Allow-Origin', '*',
  'Access-Control-Expose-Headers', 'Content-Language, Content-Disposition, Content-Location, Content-Range, ETag, Link, Retry-After, RateLimit, RateLimit-Policy, Change-Feed-Head, Search-Index-Lag, X-Request-Id',
  'X-Request-Id', randomUUID(),
  'Content-Length', String(Buffer.byteLength(registryBody)),
]
const variants = {
  'floor: its headers, its document': (response) =>
    response.writeHead(200, { 'Content-Type': 'application/vnd.api+json', 'Content-Length': Buffer.byteLength(floorBody) }).end(floorBody),
  "floor's headers, the registry's document": (response) =>
    response.writeHead(200, { 'Content-Type': 'application/vnd.api+json', 'Content-Length': Buffer.byteLength(registryBody) }).end(registryBody),
  "the registry's headers and document": (response) => response.writeHead(200, registryHeaders()).end(registryBody),
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage()
  return user + system
}
const runs = {}
for (let round = 0; round < Number(options.rounds); round++) {
  for (const [name, respond] of Object.entries(variants)) {
    const server = createServer((_request, response) => respond(response))
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    const before = cpuMicros()
    const result = await autocannon({ url: `http://127.0.0.1:${server.address().port}/`, connections: 10, duration: Number(options.duration) })
    ;(runs[name] ??= []).push({ rate: result.requests.average, cpu: (cpuMicros() - before) / result.requests.total })
    server.closeAllConnections()
    server.close()
  }
}
const mean = (list, key) => list.reduce((sum, run) => sum + run[key], 0) / list.length
const first = mean(Object.values(runs)[0], 'rate')
console.log(`${machine()}; ${options.rounds} rounds of ${options.duration} s`)
for (const [name, list] of Object.entries(runs)) {
  console.log(`${name}: ${Math.round(mean(list, 'rate')).toLocaleString('en')} req/s (${(mean(list, 'rate') / first).toFixed(2)}), ${mean(list, 'cpu').toFixed(1)} us of CPU a request`)
}
