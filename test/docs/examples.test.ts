// Every TypeScript example of the documentation type-checks against the package as users import it
// (`entity-registry/...`, resolved through package.json's exports to dist/'s types). An example may
// use what its page set up before (a `store`, an `embedder`...): those names, and only when the
// example does not declare them itself, are declared ahead of it. Needs dist/ (`npm run build`).
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
// Inside the package (.data/ is ignored), so that `entity-registry` resolves to this package itself.
const WORK = join(ROOT, '.data', 'docs-examples')

/** What a page's earlier text sets up, by name: declared ahead of an example that uses it. */
const PAGE_CONTEXT: Record<string, string> = {
  store: "declare const store: import('entity-registry/kysely').KyselyStore",
  blobs: "declare const blobs: import('entity-registry').BlobStore",
  auth: "declare const auth: import('entity-registry').Authenticator",
  embedder: "declare const embedder: import('entity-registry').Embedder",
  logger: 'declare const logger: { info(event: unknown): void }',
  cursor: 'declare const cursor: string',
  connectionString: 'declare const connectionString: string',
  createMyStore: "declare function createMyStore(): Promise<import('entity-registry').RegistryStore>",
  createIndexer: "import { createIndexer } from 'entity-registry'",
  createLancedbSearchIndex: "import { createLancedbSearchIndex } from 'entity-registry/lancedb'",
  createTransformersEmbedder: "import { createTransformersEmbedder } from 'entity-registry/embedders'",
}

/** The ```ts blocks of the documentation's pages (not the generated reference), with where they are. */
function examples(): { where: string; code: string }[] {
  const listed = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'docs'], { cwd: ROOT, encoding: 'utf8' })
  const pages = listed.stdout.split('\n').filter((file) => file.endsWith('.md'))
  return pages.flatMap((page) => {
    const text = readFileSync(join(ROOT, page), 'utf8')
    return [...text.matchAll(/^( *)```ts\n([\s\S]*?)^\1```/gm)].map((match) => ({
      where: `${page}:${text.slice(0, match.index).split('\n').length}`,
      code: match[2]!.replace(new RegExp(`^${match[1]}`, 'gm'), ''),
    }))
  })
}

function withPageContext(code: string): string {
  const declares = (name: string) => new RegExp(`(?:const|let|function)\\s+(?:\\{[^}]*\\b${name}\\b[^}]*\\}|${name}\\b)|import\\s*\\{[^}]*\\b${name}\\b`).test(code)
  const context = Object.entries(PAGE_CONTEXT).filter(([name]) => new RegExp(`\\b${name}\\b`).test(code) && !declares(name))
  return `${context.map(([, declaration]) => declaration).join('\n')}\n${code}\nexport {}\n`
}

afterAll(() => rmSync(WORK, { recursive: true, force: true }))

it('type-checks every TypeScript example of the documentation against the package', () => {
  const found = examples()
  expect(found.length).toBeGreaterThanOrEqual(16)
  rmSync(WORK, { recursive: true, force: true })
  mkdirSync(WORK, { recursive: true })
  const files = found.map(({ where, code }, index) => {
    const file = join(WORK, `example-${index}.ts`)
    writeFileSync(file, withPageContext(code))
    return { file, where }
  })
  const compilerOptions = { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2023', 'dom'], strict: true, skipLibCheck: true, noEmit: true, types: ['node'] }
  writeFileSync(join(WORK, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }))
  const result = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', WORK], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 })
  // Each error named by the page and line of its example.
  const errors = result.stdout.replace(/^(\S*example-(\d+)\.ts)/gm, (_, path: string, index: string) => `${files[Number(index)]!.where} (${relative(ROOT, path)})`)
  expect(errors).toBe('')
  expect(result.status).toBe(0)
}, 120_000)
