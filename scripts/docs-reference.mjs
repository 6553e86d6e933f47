// Writes the documentation site's reference pages, generated from the built package so that they
// cannot go stale: the HTTP API from dist/openapi.json, the CLI from its own `help` output, and the
// library API from the types of every subpath export of package.json (TypeDoc). Run after
// `npm run build`; `npm run docs:build` runs it. Usage: node scripts/docs-reference.mjs [--out DIR]
// (default docs/reference; the pages are generated, never committed).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const { values } = parseArgs({ options: { out: { type: 'string', default: path.join(root, 'docs', 'reference') } } })
const out = path.resolve(values.out)

/** The CLI's commands whose `help COMMAND` is a section of the CLI page, in the order of its general help. */
const CLI_COMMANDS = ['serve', 'import', 'reindex', 'keys', 'orgs']

const cli = path.join(root, 'dist', 'cli', 'main.js')
const openApiFile = path.join(root, 'dist', 'openapi.json')
for (const file of [cli, openApiFile]) {
  if (!existsSync(file)) throw new Error(`${path.relative(root, file)} is missing: run npm run build first`)
}


function indexPage(subpathNames) {
  return `# Reference

Generated from the package itself at each build of this site: they change when the code does.

- [HTTP API](./http.md): every path, parameter, response and error code, from the OpenAPI document
  (\`GET /v1/openapi.json\`, or \`entity-registry/openapi.json\` in the package).
- [Command line](./cli.md): \`entity-registry help\` and each command's \`--help\`.
- [Library API](./api/index.md): the exported functions and types of every import path (\`${subpathNames.join('\`, \`')}\`).
- [The interface specification](../registry-interface-v1.md): the contract this implementation keeps.
`
}

// ---- HTTP API, from the OpenAPI document ----

function httpPage(document) {
  const lines = [
    '# HTTP API',
    '',
    `${document.info.description} OpenAPI ${document.openapi}, interface version ${document.info.version}.`,
    'Every request but `/v1/openapi.json` needs `Authorization: Bearer <API_KEY>`.',
    '',
  ]
  for (const [route, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      lines.push(`## ${method.toUpperCase()} ${code(route)}`, '', `${operation.summary}.`, '')
      if (operation.description) lines.push(operation.description, '')
      lines.push(`Operation id: ${code(operation.operationId)}.${operation.security?.length === 0 ? ' No key needed.' : ''}`, '')
      if (operation.parameters?.length) {
        lines.push('| parameter | in | required | schema | description |', '|---|---|---|---|---|')
        for (const parameter of operation.parameters) {
          lines.push(`| ${code(parameter.name)} | ${parameter.in} | ${parameter.required ? 'yes' : 'no'} | ${schemaSummary(parameter.schema)} | ${cell(parameter.description ?? '')} |`)
        }
        lines.push('')
      }
      lines.push('| status | description | body | headers |', '|---|---|---|---|')
      for (const [status, response] of Object.entries(operation.responses)) {
        const bodies = Object.entries(response.content ?? {}).map(([type, { schema }]) => `${code(type)}${schema?.$ref ? ` ([${refName(schema.$ref)}](#${anchor(refName(schema.$ref))}))` : ''}`)
        const headers = Object.keys(response.headers ?? {}).map(code)
        lines.push(`| ${status} | ${cell(response.description)} | ${bodies.join(', ')} | ${headers.join(', ')} |`)
      }
      lines.push('')
    }
  }
  lines.push('## Error codes', '', 'An error document\'s `code`, with its status and title (`x-error-codes` in the OpenAPI document).', '')
  lines.push('| code | status | title |', '|---|---|---|')
  for (const { code: errorCode, status, title } of document['x-error-codes']) lines.push(`| ${code(errorCode)} | ${status} | ${title} |`)
  lines.push('', '## Schemas', '')
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    lines.push(`### ${name}`, '', '```json', JSON.stringify(schema, null, 2), '```', '')
  }
  return lines.join('\n')
}

function schemaSummary(schema = {}) {
  const facts = [schema.type ?? 'any']
  if (schema.enum) facts.push(`one of ${schema.enum.map(code).join(', ')}`)
  if (schema.pattern) facts.push(`pattern ${code(schema.pattern)}`)
  if (schema.minimum !== undefined) facts.push(`minimum ${schema.minimum}`)
  if (schema.maximum !== undefined) facts.push(`maximum ${schema.maximum}`)
  if (schema.maxLength !== undefined) facts.push(`at most ${schema.maxLength} characters`)
  if (schema.default !== undefined) facts.push(`default ${code(String(schema.default))}`)
  return cell(facts.join(', '))
}

const refName = (ref) => ref.split('/').at(-1)
// VitePress's anchors: the heading in lowercase, words joined by "-".
const anchor = (heading) => heading.toLowerCase()
const code = (text) => `\`${text}\``
// A table cell: no line breaks, pipes escaped, and Vue's {{ }} left as text.
const cell = (text) => text.replace(/\n+/g, ' ').replace(/\|/g, '\\|').replace(/\{\{/g, '{<!-- -->{')

// ---- Command line, from its own help ----

function cliPage() {
  const help = (...args) => execFileSync(process.execPath, [cli, ...args], { encoding: 'utf8' }).trimEnd()
  const sections = [
    '# Command line',
    '',
    'The output of `entity-registry help` and of `entity-registry help COMMAND` (also `COMMAND --help`).',
    'How the options work together, with examples: [Command line](../guides/command-line.md).',
    '',
    '## entity-registry help',
    '',
    fence(help('help')),
  ]
  for (const command of CLI_COMMANDS) sections.push('', `## ${command}`, '', fence(help('help', command)))
  return `${sections.join('\n')}\n`
}

const fence = (text) => `\`\`\`text\n${text}\n\`\`\``

// ---- Library API, from the exported types (TypeDoc) ----

/** The subpath exports that are modules (not the OpenAPI JSON or package.json), by import name. */
function moduleExports() {
  const { name, exports } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  return Object.entries(exports)
    .filter(([, target]) => typeof target === 'object' && target.types)
    .map(([subpath, target]) => ({ name: subpath === '.' ? name : `${name}/${subpath.slice(2)}`, types: path.join(root, target.types) }))
}

async function libraryPages(apiOut) {
  const { Application } = await import('typedoc')
  const modules = moduleExports()
  // Each entry point is a subpath's declaration file; a small module beside it names the module
  // as users import it (TypeDoc names a module from its `@module` tag).
  const stubs = path.join(apiOut, '.entries')
  mkdirSync(stubs, { recursive: true })
  const entryPoints = modules.map(({ name, types }) => {
    const stub = path.join(stubs, `${name.replace(/\//g, '.')}.d.ts`)
    const target = path.relative(stubs, types).replace(/\.d\.ts$/, '.js')
    writeFileSync(stub, `/**\n * Import it as \`${name}\`.\n * @module ${name}\n */\nexport * from '${target.startsWith('.') ? target : `./${target}`}'\n`)
    return stub
  })
  // A program of the stubs alone: the declaration files they reach, not the project's sources.
  const tsconfig = path.join(stubs, 'tsconfig.json')
  const compilerOptions = { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, skipLibCheck: true, noEmit: true, types: ['node'], typeRoots: [path.join(root, 'node_modules', '@types')] }
  writeFileSync(tsconfig, JSON.stringify({ compilerOptions, files: entryPoints }))
  const app = await Application.bootstrapWithPlugins({
    entryPoints,
    out: apiOut,
    plugin: ['typedoc-plugin-markdown', 'typedoc-vitepress-theme'],
    docsRoot: path.dirname(path.dirname(apiOut)),
    name: 'Library API',
    readme: 'none',
    disableSources: true,
    excludePrivate: true,
    skipErrorChecking: true,
    tsconfig,
    logLevel: 'Warn',
    hidePageTitle: false,
    entryFileName: 'index',
    // One page an import path, the way users meet the API (not a page a function).
    outputFileStrategy: 'modules',
    sidebar: { pretty: true, collapsed: true },
  })
  const project = await app.convert()
  if (!project) throw new Error('TypeDoc could not read the exported types')
  await app.generateOutputs(project)
  rmSync(stubs, { recursive: true, force: true })
  return modules.map(({ name }) => name)
}

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
const openApi = JSON.parse(readFileSync(openApiFile, 'utf8'))
writeFileSync(path.join(out, 'http.md'), httpPage(openApi))
writeFileSync(path.join(out, 'cli.md'), cliPage())
const subpaths = await libraryPages(path.join(out, 'api'))
writeFileSync(path.join(out, 'index.md'), indexPage(subpaths))
