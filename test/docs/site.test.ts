// The documentation site: its reference pages are generated from the built package and name every
// endpoint, parameter, response and error code of the OpenAPI document, every option the CLI
// accepts and every export of every import path; and `vitepress build` makes a site whose internal
// links all resolve (a dead one fails the build), that loads nothing from another origin and whose
// local search finds `filterScope`. Needs dist/ (`npm run build`, as `npm test` does first).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMMAND_OPTIONS } from '../../src/cli/arguments.js'

const CHROMIUM = process.env.ER_CHROMIUM ?? '/usr/bin/chromium'
const noChromium = existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium)`
if (noChromium && process.env.ER_REQUIRE_BROWSER === '1') throw new Error(`ER_REQUIRE_BROWSER=1 but ${noChromium}`)

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const REFERENCE = join(ROOT, 'docs', 'reference')
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, string | { import: string }> }

type Operation = { parameters?: { name: string }[]; responses: Record<string, unknown> }
const openApi = JSON.parse(readFileSync(join(ROOT, 'dist', 'openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>
  'x-error-codes': { code: string }[]
}

const page = (file: string) => readFileSync(join(REFERENCE, file), 'utf8')
/** A page's text from the heading that starts with `heading` to the next heading of that level. */
function section(text: string, heading: string): string {
  const level = /^#+/.exec(heading)![0]
  const start = text.indexOf(`\n${heading}`)
  expect(start, `no heading "${heading}"`).toBeGreaterThanOrEqual(0)
  const end = text.indexOf(`\n${level} `, start + heading.length + 1)
  return text.slice(start, end === -1 ? undefined : end)
}

function run(args: string[], timeout: number) {
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout })
  expect(result.status, `${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0)
  return result
}

describe('the documentation site', () => {
  const site = mkdtempSync(join(tmpdir(), 'er-docs-site-'))
  beforeAll(() => {
    run([join(ROOT, 'scripts', 'docs-reference.mjs')], 240_000)
  }, 240_000)
  afterAll(() => rmSync(site, { recursive: true, force: true }))

  it('renders every path, parameter, response and error code of the OpenAPI document', () => {
    const http = page('http.md')
    const operations = Object.entries(openApi.paths).flatMap(([route, methods]) => Object.entries(methods).map(([method, operation]) => ({ route, method, operation })))
    expect(operations.length).toBeGreaterThanOrEqual(7)
    for (const { route, method, operation } of operations) {
      const text = section(http, `## ${method.toUpperCase()} \`${route}\``)
      for (const { name } of operation.parameters ?? []) expect(text, `${route} ${name}`).toContain(`| \`${name}\` |`)
      for (const status of Object.keys(operation.responses)) expect(text, `${route} ${status}`).toMatch(new RegExp(`^\\| ${status} \\|`, 'm'))
    }
    const codes = section(http, '## Error codes')
    expect(openApi['x-error-codes'].map(({ code }) => code)).toContain('store_unavailable')
    for (const { code } of openApi['x-error-codes']) expect(codes).toContain(`| \`${code}\` |`)
  })

  it("shows each command's help, which names every option its parser accepts", () => {
    const cli = page('cli.md')
    for (const [command, options] of Object.entries(COMMAND_OPTIONS)) {
      // `orgs list` takes the options of `keys` that mean something to it: its help is beside keys'.
      const help = command === 'keys' ? `${section(cli, '## keys')}${section(cli, '## orgs')}` : section(cli, `## ${command}`)
      expect(help).toContain(run([join(ROOT, 'dist', 'cli', 'main.js'), command, '--help'], 10_000).stdout.trimEnd())
      for (const option of Object.keys(options)) expect(help, `${command} --${option}`).toMatch(new RegExp(`^ +--${option}\\b`, 'm'))
    }
  })

  it('documents every export of every import path of the package', async () => {
    const modules = Object.entries(manifest.exports).filter((entry): entry is [string, { import: string }] => typeof entry[1] === 'object')
    expect(modules.length).toBeGreaterThanOrEqual(16)
    const index = page('api/index.md')
    for (const [subpath, { import: file }] of modules) {
      const name = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`
      const link = new RegExp(`^- \\[${name}\\]\\(([^)]+)\\)$`, 'm').exec(index)?.[1]
      expect(link, `${name} in api/index.md`).toBeDefined()
      const text = page(join('api', link!))
      const exported = Object.keys(await import(join(ROOT, file)))
      // A heading a symbol, its underscores escaped as Markdown (`CONTRACT\\_FIELDS`), functions with `()`.
      for (const symbol of exported) expect(text, `${name}: ${symbol}`).toMatch(new RegExp(`^#+ ${symbol.replace(/_/g, '\\\\_')}(\\(\\))?$`, 'm'))
    }
  })

  it('builds, with every internal link resolved, nothing loaded from another origin, and a local search that finds filterScope', () => {
    // VitePress fails the build on a dead internal link (`ignoreDeadLinks: false` in the config).
    run([join(ROOT, 'node_modules', 'vitepress', 'bin', 'vitepress.js'), 'build', 'docs', '--outDir', site], 240_000)
    const files = readdirSync(site, { recursive: true, encoding: 'utf8' })
    expect(files).toContain('guides/nextjs.html')
    expect(files).toContain('reference/http.html')
    const fromElsewhere = /<(?:script|img|iframe|source)\b[^>]*\bsrc="(?:https?:)?\/\/|<link\b[^>]*\bhref="(?:https?:)?\/\/|url\(\s*['"]?(?:https?:)?\/\/|@import\s+(?:url\()?['"]?(?:https?:)?\/\//
    // The theme's fallback for a social link's unknown icon asks iconify.design; the site has no social links.
    const socialIconFallback = "url('https://api.iconify.design/simple-icons/"
    for (const file of files.filter((name) => /\.(html|css|js)$/.test(name))) {
      expect(fromElsewhere.exec(readFileSync(join(site, file), 'utf8').replaceAll(socialIconFallback, ''))?.[0], file).toBeUndefined()
    }
    const searchIndex = files.find((name) => /@localSearchIndexroot\.[\w-]+\.js$/.test(name))
    expect(searchIndex).toBeDefined()
    expect(readFileSync(join(site, searchIndex!), 'utf8')).toContain('filterScope')
  }, 240_000)

  it.skipIf(noChromium !== null)(`opens in Chromium: the home page, a guide, the search box finding filterScope, no console error${noChromium ? ` (skipped: ${noChromium})` : ''}`, async () => {
    // The built site served as a static host would (clean URLs: /guides/nextjs is guides/nextjs.html).
    const types: Record<string, string> = { html: 'text/html', js: 'text/javascript', css: 'text/css', json: 'application/json', png: 'image/png', svg: 'image/svg+xml', woff2: 'font/woff2' }
    const host: Server = createServer((request, response) => {
      const path = decodeURIComponent(new URL(request.url!, 'http://site').pathname).replace(/\/$/, '/index')
      const file = [join(site, path), join(site, `${path}.html`)].find((candidate) => candidate.startsWith(site) && existsSync(candidate) && statSync(candidate).isFile())
      if (file === undefined) return void response.writeHead(404).end()
      response.writeHead(200, { 'content-type': types[file.split('.').at(-1)!] ?? 'application/octet-stream' }).end(readFileSync(file))
    })
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve))
    const origin = `http://127.0.0.1:${(host.address() as { port: number }).port}`
    const browser = await chromium.launch({ executablePath: CHROMIUM })
    try {
      const page = await browser.newPage()
      const troubles: string[] = []
      page.on('console', (message) => void (message.type() === 'error' && troubles.push(message.text())))
      page.on('pageerror', (error) => void troubles.push(error.message))
      page.on('response', (response) => void (response.status() >= 400 && troubles.push(`${response.status()} ${response.url()}`)))
      page.on('request', (request) => void (new URL(request.url()).origin !== origin && troubles.push(`a request to another origin: ${request.url()}`)))
      await page.goto(`${origin}/`)
      await page.getByRole('link', { name: 'Getting started' }).first().waitFor()
      await page.goto(`${origin}/guides/nextjs`)
      expect(await page.locator('h1').textContent()).toContain('Next.js')
      await page.locator('.DocSearch-Button').click()
      await page.locator('.search-input').fill('filterScope')
      await page.locator('.result').first().waitFor()
      expect(await page.locator('.results').textContent()).toMatch(/filterScope/)
      expect(troubles).toEqual([])
    } finally {
      await browser.close()
      host.close()
    }
  }, 60_000)
})
