#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { createKeyCommand, importCommand, serveCommand } from './commands.js'

const USAGE = `entity-registry: publish a warehouse of entities as a read-only JSON:API

Usage:
  entity-registry serve  [--data DIR] [--database URL] [--port N] [--host H] [--api-key KEY]...
                         [--rate-limit N] [--demo] [--base-url URL] [--trust-proxy]
  entity-registry import FILE.ndjson [--data DIR] [--database URL]
  entity-registry keys create [--data DIR] [--database URL]

Options:
  --data DIR        data directory: the SQLite file and the rendition blobs (default ./data)
  --database URL    postgres://... (or a SQLite file path) instead of the SQLite file in --data
  --port N          port to listen on; 0 picks a free one (default 8080)
  --host H          address to listen on (default 127.0.0.1)
  --api-key KEY     an accepted API key (repeatable); also ENTITY_REGISTRY_API_KEYS=k1,k2 and keys
                    made by "keys create". With none at all, serve creates one and prints it.
  --rate-limit N    requests per minute per key; 0 turns limiting off (default 600)
  --demo            import the bundled demo data when the store is empty
  --base-url URL    public address the API is reached at (default: taken from each request)
  --trust-proxy     take the public host from X-Forwarded-Host / X-Forwarded-Proto
`

class UsageError extends Error {}

const print = (line: string) => console.log(line)

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      data: { type: 'string', default: './data' },
      database: { type: 'string' },
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      'api-key': { type: 'string', multiple: true, default: [] },
      'rate-limit': { type: 'string', default: '600' },
      demo: { type: 'boolean', default: false },
      'base-url': { type: 'string' },
      'trust-proxy': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  const [command, ...rest] = positionals
  if (values.help || command === undefined) {
    print(USAGE)
    return command === undefined && !values.help ? 2 : 0
  }
  const data = { data: values.data, ...(values.database ? { database: values.database } : {}) }
  switch (command) {
    case 'serve': {
      const environmentKeys = (process.env.ENTITY_REGISTRY_API_KEYS ?? '').split(',').map((key) => key.trim())
      const stop = await serveCommand(
        {
          ...data,
          port: wholeNumber(values.port, '--port'),
          host: values.host,
          apiKeys: [...values['api-key'], ...environmentKeys].filter((key) => key !== ''),
          rateLimit: wholeNumber(values['rate-limit'], '--rate-limit'),
          demo: values.demo,
          ...(values['base-url'] ? { baseUrl: values['base-url'] } : {}),
          trustProxy: values['trust-proxy'],
        },
        print,
      )
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve)
        process.once('SIGTERM', resolve)
      })
      await stop()
      return 0
    }
    case 'import': {
      if (rest.length !== 1) throw new UsageError('import takes one NDJSON file')
      return (await importCommand(rest[0]!, data, print)) ? 0 : 1
    }
    case 'keys': {
      if (rest.join(' ') !== 'create') throw new UsageError('the keys command has one subcommand: keys create')
      await createKeyCommand(data, print)
      return 0
    }
    default:
      throw new UsageError(`unknown command "${command}"`)
  }
}

function wholeNumber(value: string, option: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${option} takes a whole number, not "${value}"`)
  return Number(value)
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    console.error(`entity-registry: ${(error as Error).message}${usage ? '\n\n' + USAGE : ''}`)
    process.exitCode = usage ? 2 : 1
  },
)
