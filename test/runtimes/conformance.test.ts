/**
 * The HTTP conformance suite (entity-registry/testing) against every way to run the registry, each on
 * its own runtime, each serving the demo data as a user starts it: the CLI on Node (node:http) and on
 * Deno (Deno.serve), the Bun example (Bun.serve), the Next.js example after `next build` and
 * `next start`, and a Hattip handler on Hattip's Node adapter. Then the same requests must get the
 * same bodies from every one of them.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpConformanceCases, type ConformanceTarget } from '../../src/testing/index.js'
import { CLI } from '../support/cli.js'
import { assertJsonApi } from '../support/documents.js'
import { installedExample, npm, startListening, type ListeningProcess } from '../support/processes.js'

const KEY = 'conformance-key'
const root = fileURLToPath(new URL('../../', import.meta.url))
const bin = (name: string) => join(root, 'node_modules', '.bin', name)
const serveArgs = (data: string) => ['serve', '--demo', '--data', data, '--port', '0', '--api-key', KEY]

interface Runtime {
  name: string
  /** The path the registry is mounted at on that server. */
  basePath: string
  /** Whether the adapter knows the client's address (Next.js gives a route handler none). */
  knowsClientAddress: boolean
  start(data: string): Promise<ListeningProcess>
}

const runtimes: Runtime[] = [
  { name: 'Node (CLI, node:http)', basePath: '', knowsClientAddress: true, start: (data) => startListening(process.execPath, [CLI, ...serveArgs(data)]) },
  { name: 'Deno (CLI, Deno.serve)', basePath: '', knowsClientAddress: true, start: (data) => startListening(bin('deno'), ['run', '--allow-all', CLI, ...serveArgs(data)]) },
  {
    name: 'Bun (examples/bun, Bun.serve)',
    basePath: '',
    knowsClientAddress: true,
    start: async (data) => startListening(npm, ['start'], { cwd: installedExample('bun'), env: exampleEnv(data) }),
  },
  {
    name: 'Next.js (examples/nextjs, next build and next start)',
    basePath: '/api/registry',
    knowsClientAddress: false,
    async start(data) {
      const example = installedExample('nextjs')
      const build = spawnSync(npm, ['run', 'build'], { cwd: example, encoding: 'utf8', timeout: 300_000 })
      if (build.status !== 0) throw new Error(`next build failed:\n${build.stdout}\n${build.stderr}`)
      return startListening(npm, ['start'], { cwd: example, env: exampleEnv(data) })
    },
  },
  {
    name: 'Hattip (adapter-node)',
    basePath: '',
    knowsClientAddress: true,
    start: (data) => startListening(process.execPath, [join(root, 'test/runtimes/hattip-server.mjs')], { env: exampleEnv(data) }),
  },
]

function exampleEnv(data: string): Record<string, string> {
  return { PORT: '0', HOST: '127.0.0.1', DATA_DIR: data, ENTITY_REGISTRY_API_KEYS: KEY }
}

/** Requests whose bodies must be the same everywhere once the server's own base URL is taken out. */
const SAME_EVERYWHERE = [
  '/v1/entities?page[limit]=25',
  '/v1/entities?filter=type:committee%20jurisdiction:US&page[limit]=10',
  '/v1/entities/hconres74112',
  '/v1/entities?filter=nosuchfield:x',
  '/v1/entities/nosuchentity0',
  '/v1/entities?page[limit]=0',
  '/v1/search?q=senator%20arkansas',
]
const bodies = new Map<string, string[]>()

for (const runtime of runtimes) {
  describe(runtime.name, () => {
    const data = mkdtempSync(join(tmpdir(), 'er-runtime-'))
    let server: ListeningProcess | undefined
    const target = (): ConformanceTarget => ({ baseUrl: `${server!.url}${runtime.basePath}`, apiKey: KEY, validateDocument: assertJsonApi })

    beforeAll(async () => {
      server = await runtime.start(data)
    }, 420_000)
    afterAll(async () => {
      await server?.stop()
      rmSync(data, { recursive: true, force: true })
    })

    for (const conformanceCase of httpConformanceCases) it(conformanceCase.name, () => conformanceCase.run(target()), 60_000)

    it('answers the requests compared across runtimes', async () => {
      const base = target().baseUrl
      const answers: string[] = []
      for (const path of SAME_EVERYWHERE) {
        const response = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${KEY}` } })
        answers.push(`${response.status} ${(await response.text()).replaceAll(base, 'BASE')}`)
      }
      bodies.set(runtime.name, answers)
    })

    it('serves the explorer page and its script, with no key', async () => {
      const page = await fetch(`${target().baseUrl}/explore`)
      expect([page.status, page.headers.get('Content-Type'), page.headers.get('Referrer-Policy')]).toEqual([200, 'text/html; charset=utf-8', 'no-referrer'])
      expect(page.headers.get('Content-Security-Policy')).toContain("connect-src 'self'")
      const script = /<script type="module" src="([^"]+)">/.exec(await page.text())![1]!
      expect(script).toBe(`${runtime.basePath}/explore/${script.split('/').at(-1)}`)
      const bundle = await fetch(`${server!.url}${script}`)
      expect([bundle.status, bundle.headers.get('Content-Type')]).toEqual([200, 'text/javascript; charset=utf-8'])
      expect((await bundle.text()).length).toBeGreaterThan(10_000)
    })

    // Last: it leaves this client's address refused for a while.
    it('limits failed authentications by the client address the runtime gives the handler', async () => {
      // The conformance cases above sent some wrong keys already: 70 more are past the 60 a minute.
      const statuses: number[] = []
      const started = Date.now()
      for (let attempt = 0; attempt < 70; attempt++) {
        statuses.push((await fetch(`${target().baseUrl}/v1/entities`, { headers: { Authorization: 'Bearer wrong' } })).status)
      }
      // The allowance refills one failure a second: on a slow machine a few pass again once limited.
      const refilled = Math.ceil((Date.now() - started) / 1000)
      const limitedFrom = statuses.indexOf(429)
      const afterLimit = statuses.slice(limitedFrom)
      if (!runtime.knowsClientAddress) expect(statuses).toEqual(Array(70).fill(401))
      else
        expect([
          statuses.slice(0, limitedFrom).every((status) => status === 401),
          afterLimit.every((status) => status === 429 || status === 401),
          afterLimit.filter((status) => status === 401).length <= refilled,
          limitedFrom > 0,
        ]).toEqual([true, true, true, true])
    })
  })
}

describe('every runtime', () => {
  it('answers the same requests with the same bodies as the Node server', () => {
    const [node, ...others] = runtimes.map((runtime) => runtime.name)
    const expected = bodies.get(node!)
    expect(expected, 'the Node server answered').toBeDefined()
    for (const name of others) expect({ name, bodies: bodies.get(name) }).toEqual({ name, bodies: expected })
  })
})
