// The shell examples of the documentation's Getting started run as written against
// `entity-registry serve --demo` (the built CLI; only its address, data directory and the CLI's
// path are put in), and answer what their comments say.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, startServer, type Server } from '../support/cli.js'

const GETTING_STARTED = fileURLToPath(new URL('../../docs/getting-started.md', import.meta.url))
const KEY = 'demo-key'

/** The ```sh blocks of the page's "Try it" section, in order. */
function tryItBlocks(): string[] {
  const page = readFileSync(GETTING_STARTED, 'utf8')
  const section = page.slice(page.indexOf('\n## Try it'), page.indexOf('\n## ', page.indexOf('\n## Try it') + 1))
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!)
}

describe("Getting started's shell examples", () => {
  const data = mkdtempSync(join(tmpdir(), 'er-getting-started-'))
  const work = mkdtempSync(join(tmpdir(), 'er-getting-started-cwd-'))
  let server: Server
  const blocks = tryItBlocks()

  /** Runs a block with bash, stopping at the first failing command (an HTTP error fails curl). */
  function runBlock(block: string) {
    const script = block
      .replaceAll('http://127.0.0.1:8080', server.url)
      .replaceAll('--data .data/demo', `--data ${data}`)
      .replaceAll('node dist/cli/main.js', `node ${CLI}`)
      .replaceAll('curl -s ', 'curl -sS --fail-with-body ')
    const result = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: work, encoding: 'utf8', timeout: 60_000 })
    expect(result.status, `${script}\n${result.stdout}\n${result.stderr}`).toBe(0)
    return result.stdout
  }

  beforeAll(async () => {
    server = await startServer(['--demo', '--data', data, '--api-key', KEY])
    // As a reader would, wait until the demo data is searchable (the index follows the feed at start).
    for (let tries = 0; tries < 120; tries++) {
      const response = await fetch(`${server.url}/v1/search?q=farming`, { headers: { authorization: `Bearer ${KEY}` } })
      await response.arrayBuffer()
      if (response.headers.get('search-index-lag') === '0') break
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }, 90_000)
  afterAll(async () => {
    await server?.stop()
    rmSync(data, { recursive: true, force: true })
    rmSync(work, { recursive: true, force: true })
  })

  it('has the requests and the change to the data', () => {
    expect(blocks).toHaveLength(2)
    expect(blocks[0]!.match(/^curl /gm)?.length).toBeGreaterThanOrEqual(8)
  })

  it('answers every request of the tour, the bills, the rendition and the Agriculture committees among them', () => {
    const output = runBlock(blocks[0]!)
    expect(output).toContain('"id":"hr3590111"')
    expect(output).toMatch(/"name":"[^"]*Agriculture/)
    expect(output).toContain('"facets":{')
    const rendition = readFileSync(join(work, 'bill.html'), 'utf8')
    expect(rendition).toMatch(/<html/i)
  }, 90_000)

  it('imports the change from another shell, and the server serves it at once', async () => {
    runBlock(blocks[1]!)
    expect(existsSync(join(work, 'changes.ndjson'))).toBe(true)
    const headers = { authorization: `Bearer ${KEY}` }
    const created = await fetch(`${server.url}/v1/entities/x2026001`, { headers })
    expect(created.status).toBe(200)
    expect(((await created.json()) as { data: { attributes: { name: string } } }).data.attributes.name).toBe('Jane Example')
    const merged = await fetch(`${server.url}/v1/entities/s1111`, { headers })
    await merged.arrayBuffer()
    expect(merged.headers.get('content-location')).toMatch(/\/v1\/entities\/s1113$/)
  }, 90_000)
})
