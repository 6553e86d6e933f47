#!/usr/bin/env node
import { parseInvocation } from './arguments.js'
import type { Invocation } from './invocation.js'
import { endWithParent, rerunWithMallocSettings, wantsMallocSettings } from './malloc-settings.js'
import { UsageError } from './usage-error.js'
import { packageVersion } from '../node/package-files.js'

// LanceDB's native log prints warnings of its own housekeeping to stderr (a reindex of 1,000,000
// entities printed 232 lines of partitions split while it compacted); errors only, unless the
// operator asks for more. Read when the native module loads, so set before search is opened.
process.env.LANCEDB_LOG ??= 'error'

const print = (line: string) => console.log(line)
const warn = (line: string) => console.error(line)

async function run(invocation: Invocation): Promise<number> {
  // Loaded only for a command that needs it: help, version and usage errors answer at once.
  const commands = () => import('./commands.js')
  switch (invocation.command) {
    case 'help':
      print(invocation.text)
      return 0
    case 'version':
      print(packageVersion())
      return 0
    case 'serve': {
      const stop = await (await commands()).serveCommand(invocation.options, print)
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve)
        process.once('SIGTERM', resolve)
      })
      // The first signal shuts down gracefully; a second one ends the process at once.
      const now = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143)
      process.once('SIGINT', now)
      process.once('SIGTERM', now)
      await stop()
      return 0
    }
    case 'import':
      return (await commands()).importCommand(invocation.input, invocation.data, print, warn)
    case 'reindex':
      if (wantsMallocSettings()) return rerunWithMallocSettings()
      endWithParent()
      await (await commands()).reindexCommand(invocation.data, print, warn)
      return 0
    case 'keys create':
    case 'keys list':
    case 'keys revoke':
    case 'orgs list':
      await (await import('./keys-commands.js')).keysCommand(invocation, print)
      return 0
  }
}

// Exit codes: 0 done, 1 failed while running (or an import line was rejected), 2 bad usage or a
// refused full snapshot, nothing done.
Promise.resolve()
  .then(() => run(parseInvocation(process.argv.slice(2))))
  .then(
    (code) => {
      process.exitCode = code
    },
    (error: unknown) => {
      warn(`entity-registry: ${(error as Error).message}`)
      process.exitCode = error instanceof UsageError ? 2 : 1
    },
  )
