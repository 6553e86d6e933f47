/** The key lifecycle as an operator runs it: `keys` and `orgs` beside running servers. */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey } from '../../src/auth/key-format.js'
import type { ApiKeyInfo } from '../../src/auth/key-manager.js'
import { freshPostgresSchema, storeDialects } from '../stores/each-store.js'
import { CLI, startServer, type Server } from '../support/cli.js'
import { sleep } from '../faults/harness.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!

/**
 * Runs the CLI as a child process without blocking this one: a blocked event loop would not see the
 * server close an idle keep-alive connection, and the next fetch on it would fail ("other side closed").
 */
async function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
  const [code] = (await once(child, 'close')) as [number | null]
  return { code, out, err }
}

const statusOf = async (server: Server, key: string) =>
  (await fetch(`${server.url}/v1/entities?page[limit]=1`, { headers: { Authorization: `Bearer ${key}` } })).status

/** Milliseconds until every server answers 401 to the key, asking every 100 ms; fails after 10 s. */
async function msUntilRefused(servers: Server[], key: string): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < 10_000) {
    const statuses = await Promise.all(servers.map((server) => statusOf(server, key)))
    if (statuses.every((status) => status === 401)) return performance.now() - started
    expect(statuses.every((status) => status === 200 || status === 401)).toBe(true)
    await sleep(100)
  }
  throw new Error('the key still works after 10 s')
}

/** What `keys list --json` prints for a key. */
type ListedKey = ApiKeyInfo

describe('keys and orgs on the command line [sqlite]', () => {
  const data = mkdtempSync(join(tmpdir(), 'er-keys-'))
  const store = ['--data', data]
  let server: Server

  beforeAll(async () => {
    server = await startServer(store)
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('creates a key that works, lists it without the key or its hash, and refuses it within 5 s of a revocation elsewhere', async () => {
    const created = await run(['keys', 'create', '--org', 'acme', '--label', 'ci', '--expires', '30d', ...store])
    expect(created.code).toBe(0)
    const key = created.out.trim()
    expect(key).toMatch(/^er_[0-9A-Za-z]{36}$/)
    const id = key.slice(0, 11)
    const hash = createHash('sha256').update(key).digest('hex')
    // The creation is logged for the audit trail, by public id only.
    const event = JSON.parse(created.err.trim().split('\n').at(-1)!)
    expect(event).toMatchObject({ event: 'api_key_created', org: 'acme', keyId: id, label: 'ci' })
    expect(created.err).not.toContain(key.slice(11))
    expect(await statusOf(server, key)).toBe(200)

    const table = await run(['keys', 'list', ...store])
    expect(table.code).toBe(0)
    const row = table.out.split('\n').find((line) => line.startsWith(id))!
    expect(row.split(/\s{2,}/)).toEqual([id, 'acme', 'ci', expect.stringMatching(/^20\d\d-/), expect.stringMatching(/^20\d\d-/), expect.stringMatching(/^(never|20\d\d-)/), 'active'])
    const listed = JSON.parse((await run(['keys', 'list', '--org', 'acme', '--json', ...store])).out) as ListedKey[]
    // Its last use is written within a second of the request above: either is right here.
    expect(listed).toEqual([{ id, org: 'acme', label: 'ci', createdAt: expect.any(String), expiresAt: expect.any(String), lastUsedAt: listed[0]!.lastUsedAt, state: 'active' }])
    expect(Object.keys(listed[0]!)).toEqual(['id', 'org', 'label', 'createdAt', 'expiresAt', 'lastUsedAt', 'state'])
    const expiresIn = Date.parse(listed[0]!.expiresAt!) - Date.parse(listed[0]!.createdAt)
    expect(Math.abs(expiresIn - 30 * 86_400_000)).toBeLessThan(60_000)
    for (const output of [table.out, JSON.stringify(listed)]) {
      expect(output).not.toContain(key.slice(11))
      expect(output).not.toContain(hash.slice(0, 16))
    }
    const organizations = JSON.parse((await run(['orgs', 'list', '--json', ...store])).out) as { name: string; activeKeys: number }[]
    expect(organizations.map(({ name, activeKeys }) => [name, activeKeys])).toEqual([
      ['acme', 1],
      ['default', 1],
    ])

    const revoked = await run(['keys', 'revoke', id, ...store])
    expect([revoked.code, revoked.out]).toEqual([0, `revoked ${id}\n`])
    expect(JSON.parse(revoked.err.trim())).toMatchObject({ event: 'api_key_revoked', org: 'acme', keyId: id })
    expect(await msUntilRefused([server], key)).toBeLessThan(5500)
    expect(JSON.parse((await run(['keys', 'list', '--json', '--org', 'acme', ...store])).out)[0].state).toBe('revoked')
  })

  it('records a key\'s first use within seconds', async () => {
    const key = (await run(['keys', 'create', '--org', 'usage', ...store])).out.trim()
    expect(await statusOf(server, key)).toBe(200)
    await sleep(1500)
    const [listed] = JSON.parse((await run(['keys', 'list', '--org', 'usage', '--json', ...store])).out) as ListedKey[]
    expect(Date.now() - Date.parse(listed!.lastUsedAt!)).toBeLessThan(5000)
  })

  it('refuses an expired key at once, a malformed one, and revokes all of an organization\'s keys', async () => {
    const other = (await run(['keys', 'create', '--org', 'brief', ...store])).out.trim()
    // Used as soon as it is made: on a busy machine another CLI run between the two took its 2 s.
    const shortLived = (await run(['keys', 'create', '--org', 'brief', '--expires', '3s', ...store])).out.trim()
    const madeAt = performance.now()
    expect(await statusOf(server, shortLived)).toBe(200)
    await sleep(3100 - (performance.now() - madeAt))
    expect(await statusOf(server, shortLived)).toBe(401)
    expect(await statusOf(server, `${other.slice(0, -1)}${other.endsWith('a') ? 'b' : 'a'}`)).toBe(401)
    expect(await statusOf(server, other)).toBe(200)
    const revoked = await run(['keys', 'revoke', '--org', 'brief', ...store])
    expect(revoked.out.trim().replace('revoked ', '').split(', ').sort()).toEqual([shortLived, other].map((key) => key.slice(0, 11)).sort())
    expect(await msUntilRefused([server], other)).toBeLessThan(5500)
  })

  it('serves a key created after its address went past --auth-failure-limit on its first request, while wrong keys from it answer 429', async () => {
    // A server of its own: the address every request here comes from is pushed past its allowance.
    const limited = await startServer([...store, '--auth-failure-limit', '2'])
    try {
      expect([await statusOf(limited, generateApiKey()), await statusOf(limited, generateApiKey()), await statusOf(limited, generateApiKey())]).toEqual([401, 401, 429])
      const key = (await run(['keys', 'create', '--org', 'late', ...store])).out.trim()
      expect(await statusOf(limited, key)).toBe(200)
      expect(await statusOf(limited, generateApiKey())).toBe(429)
    } finally {
      await limited.stop()
    }
  })

  it('answers an unknown key id or organization with one line and exit code 2', async () => {
    for (const [args, message] of [
      [['keys', 'revoke', 'er_unknown0'], 'keys revoke: no key has the id "er_unknown0"'],
      [['keys', 'revoke', '--org', 'nobody'], 'keys revoke: no organization is named "nobody"'],
      [['keys', 'create', '--org', 'bad name'], 'keys create: an organization name is 1 to 64 letters'],
    ] as const) {
      const result = await run([...args, ...store])
      expect([result.code, result.out], args.join(' ')).toEqual([2, ''])
      expect(result.err.split('\n')).toEqual([expect.stringContaining(message), ''])
    }
  })
})

describe.skipIf(postgres.skipReason !== null)('keys revoked on PostgreSQL behind two instances', () => {
  it('a key created from the command line works on both instances, and neither accepts it 5 s after its revocation', async () => {
    const schema = await freshPostgresSchema()
    const store = ['--data', mkdtempSync(join(tmpdir(), 'er-keys-pg-')), '--database', schema.url]
    const servers: Server[] = []
    try {
      servers.push(await startServer([...store, '--api-key', 'operator']), await startServer([...store, '--api-key', 'operator']))
      const key = (await run(['keys', 'create', '--org', 'acme', ...store])).out.trim()
      expect(await Promise.all(servers.map((server) => statusOf(server, key)))).toEqual([200, 200])
      expect((await run(['keys', 'revoke', key.slice(0, 11), ...store])).code).toBe(0)
      expect(await msUntilRefused(servers, key)).toBeLessThan(5500)
    } finally {
      await Promise.all(servers.map((server) => server.stop()))
      await schema.drop()
    }
  })
})
