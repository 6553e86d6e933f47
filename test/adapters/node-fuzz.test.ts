/**
 * The Node adapter under hostile input, over raw sockets to the real `serve` process: no request may
 * end the process, and every answer is well-formed HTTP with a JSON:API error body where it has one.
 */
import { connect } from 'node:net'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Server } from '../support/cli.js'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const KEY = 'fuzz-key-0123456789'

interface RawAnswer {
  status: number
  head: string
  body: string
}

interface RawExchange {
  /** Every complete answer on the connection, in order. */
  answers: RawAnswer[]
  /** Bytes after the last complete answer: anything here is a malformed or cut-off answer. */
  rest: string
  /** The status of the first answer, null when there was none. */
  status: number | null
}

/**
 * Writes the bytes and reads every answer until the server closes the connection, or nothing more
 * came for a while after a complete answer, or the time is up. `halfClose` ends the client's side
 * after writing (node:http then gives up requests still unanswered and closes).
 */
function rawRequest(port: number, bytes: string | Buffer, { timeoutMs = 1500, halfClose = true } = {}): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let idle: NodeJS.Timeout | undefined
    const finish = () => {
      clearTimeout(total)
      clearTimeout(idle)
      socket.destroy()
      const { answers, rest } = parseAnswers(Buffer.concat(chunks).toString('latin1'))
      resolve({ answers, rest, status: answers[0]?.status ?? null })
    }
    const total = setTimeout(finish, timeoutMs)
    socket.on('data', (chunk) => {
      chunks.push(chunk)
      clearTimeout(idle)
      if (parseAnswers(Buffer.concat(chunks).toString('latin1')).rest === '') idle = setTimeout(finish, 200)
    })
    socket.on('error', finish)
    socket.on('close', finish)
    socket.write(bytes, () => (halfClose ? socket.end() : undefined))
  })
}

/** Splits a byte stream into HTTP/1.1 answers: a body of Content-Length bytes, chunked, or none (an answer to HEAD). */
function parseAnswers(text: string): { answers: RawAnswer[]; rest: string } {
  const answers: RawAnswer[] = []
  let at = 0
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at)
    if (end === -1) break
    const head = text.slice(at, end)
    const status = /^HTTP\/1\.1 (\d{3}) [^\r\n]*/.exec(head)
    if (!status || !head.split('\r\n').slice(1).every((line) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+: [^\r\n]*$/.test(line))) break
    let bodyEnd = end + 4
    const length = /\r\ncontent-length: (\d+)/i.exec(head)
    if (/\r\ntransfer-encoding: chunked/i.test(head)) {
      const chunked = /^(?:[0-9a-f]+\r\n[\s\S]*?\r\n)*?0\r\n\r\n/i.exec(text.slice(bodyEnd))
      if (!chunked) break
      bodyEnd += chunked[0].length
    } else if (length && !text.startsWith('HTTP/1.1 ', bodyEnd)) {
      bodyEnd += Number(length[1])
      if (bodyEnd > text.length) break
    }
    answers.push({ status: Number(status[1]), head, body: text.slice(end + 4, bodyEnd) })
    at = bodyEnd
  }
  return { answers, rest: text.slice(at) }
}

/** Every answer is whole HTTP, never a 500, and an error answer of JSON:API type carries an error document. */
function expectWellFormed(exchange: RawExchange, request: string) {
  const about = JSON.stringify(request.slice(0, 200))
  expect(exchange.rest, `${about}: bytes that are no whole HTTP answer`).toBe('')
  for (const answer of exchange.answers) {
    expect(answer.status, about).not.toBe(500)
    if (/content-type: application\/vnd\.api\+json/i.test(answer.head) && answer.status >= 400 && answer.body !== '') {
      expect(JSON.parse(answer.body).errors?.[0]?.status, about).toBe(String(answer.status))
    }
  }
}

describe('node adapter under hostile requests', () => {
  let server: Server
  let port: number
  beforeAll(async () => {
    server = await startServer(['--demo', '--data', mkdtempSync(join(tmpdir(), 'er-fuzz-')), '--api-key', KEY, '--trust-proxy', '--rate-limit', '0'])
    port = Number(new URL(server.url).port)
  })
  afterAll(() => {
    server?.process.kill()
  })

  async function expectAlive() {
    expect(server.process.exitCode).toBeNull()
    const response = await fetch(`${server.url}/v1/entities?page[limit]=1`, { headers: { Authorization: `Bearer ${KEY}` } })
    expect(response.status).toBe(200)
  }

  const crashes: [string, string, number][] = [
    ['TRACE', 'TRACE / HTTP/1.1\r\nHost: localhost\r\n\r\n', 405],
    ['CONNECT', 'CONNECT /v1/entities HTTP/1.1\r\nHost: localhost\r\n\r\n', 405],
    ['Host with a port out of range', 'GET /v1/entities HTTP/1.1\r\nHost: x:99999\r\n\r\n', 400],
    ['Host with a space', 'GET /v1/entities HTTP/1.1\r\nHost: a b\r\n\r\n', 400],
    ['Host with an open bracket', 'GET /v1/entities HTTP/1.1\r\nHost: [::1\r\n\r\n', 400],
    ['Host with a bad escape', 'GET /v1/entities HTTP/1.1\r\nHost: %zz\r\n\r\n', 400],
    ['bad X-Forwarded-Host', 'GET /v1/entities HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-Host: a b\r\n\r\n', 400],
    ['bad X-Forwarded-Proto', 'GET /v1/entities HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-Proto: gopher\r\n\r\n', 400],
    ['absolute-form target', 'GET http://elsewhere/v1/entities HTTP/1.1\r\nHost: localhost\r\n\r\n', 400],
    ['HTTP/1.1 request without Host', 'GET /v1/entities HTTP/1.1\r\n\r\n', 400],
    ['malformed request line', 'GET\r\n\r\n', 400],
    ['headers too large', `GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`, 431],
  ]
  for (const [name, request, status] of crashes) {
    it(`answers ${status} to ${name} with a JSON:API error, and lives`, async () => {
      const exchange = await rawRequest(port, request)
      expect(exchange.status).toBe(status)
      expect(exchange.answers[0]!.head).toMatch(/content-type: application\/vnd\.api\+json/i)
      expectWellFormed(exchange, request)
      await expectAlive()
    })
  }

  it('answers a request before the garbage that follows it on the connection, then the garbage', async () => {
    const valid = `GET /v1/entities?page[limit]=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY}\r\n\r\n`
    const cases: [string, number[]][] = [
      ['GARBAGE\r\n\r\n', [200, 200, 400]],
      ['GET / HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n', [200, 200, 400]],
      // The third request's head is fine (401: no key), its chunked body is not (400).
      ['GET /v1/entities HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', [200, 200, 401, 400]],
    ]
    for (const [garbage, statuses] of cases) {
      const exchange = await rawRequest(port, valid + valid + garbage, { halfClose: false })
      expectWellFormed(exchange, valid + garbage)
      expect(exchange.answers.map((answer) => answer.status)).toEqual(statuses)
      expect(JSON.parse(exchange.answers[0]!.body).data).toHaveLength(1)
    }
    await expectAlive()
  })

  it('survives a fuzz of malformed request lines, methods, headers, encodings and bodies', async () => {
    const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/)
    const anyText = fc.string({ unit: 'binary', maxLength: 60 })
    const method = fc.oneof(
      fc.constantFrom('GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH', 'TRACE', 'CONNECT', 'TRACK', 'PROPFIND', 'get', 'G ET', ''),
      token,
      anyText,
    )
    const target = fc.oneof(
      fc.constantFrom('/', '/v1/entities', '/v1/entities/hr3590111', '/v1/entities/changes?filter=%00', '/v1/entities?filter=type:%E0%A4%A', '*', 'http://evil/', '//x', '/%zz', `/${'a'.repeat(9000)}`, '/v1/entities/hr3590111/renditions/rnd_x.html'),
      anyText.map((text) => `/${text}`),
    )
    const version = fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1.1x', '', 'http/1.1')
    const header = fc.oneof(
      fc.constantFrom(
        'Host: localhost',
        'Host: localhost\r\nHost: other',
        'Host: x:99999',
        'Host: a b',
        'Host: [::1',
        'Host: %zz',
        'Host:',
        `Authorization: Bearer ${KEY}`,
        'Authorization: Bearer',
        'X-Forwarded-Host: [bad',
        'X-Forwarded-Proto: javascript',
        'X-Forwarded-Proto: https, http',
        'NoColonHere',
        ' leading-space: x',
        '\tfolded continuation',
        'X-Nul: a\u0000b',
        'Content-Length: -1',
        'Content-Length: abc',
        'Content-Length: 5',
        'Content-Length: 5\r\nContent-Length: 6',
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: gzip, chunked, x',
        'Accept: application/vnd.api+json; charset=x',
        'Content-Type: application/vnd.api+json; x=y',
        'Range: bytes=-5',
        'Range: bytes=99999999999999999999-',
        'If-None-Match: "',
        `X-Long: ${'b'.repeat(20_000)}`,
      ),
      fc.tuple(token, anyText).map(([name, value]) => `${name}: ${value}`),
    )
    const body = fc.constantFrom('', 'hello', '5\r\nhello\r\n0\r\n\r\n', 'zz\r\nbad chunk\r\n', '\u0000\u00ff\u00fe')
    const eol = fc.constantFrom('\r\n', '\n', '\r')
    // What follows on the same connection: nothing, a valid request (pipelined), or more garbage.
    const then = fc.constantFrom('', `GET /v1/entities?page[limit]=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY}\r\n\r\n`, '\u0000\u00ff GARBAGE\r\n\r\n', '\r\n\r\n\r\n')
    const request = fc
      .record({ method, target, version, headers: fc.array(header, { maxLength: 6 }), body, eol, then, halfClose: fc.boolean() })
      .map(({ method, target, version, headers, body, eol, then, halfClose }) => ({
        text: `${method} ${target} ${version}${eol}${headers.join(eol)}${eol}${eol}${body}${then}`,
        halfClose,
      }))

    let answered = 0
    await fc.assert(
      fc.asyncProperty(request, async ({ text, halfClose }) => {
        const exchange = await rawRequest(port, Buffer.from(text, 'latin1'), { timeoutMs: 1000, halfClose })
        expectWellFormed(exchange, text)
        if (exchange.status !== null) answered++
      }),
      { numRuns: 300, seed: 20261122 },
    )
    expect(answered).toBeGreaterThan(200)
    await expectAlive()
  }, 120_000)
})
