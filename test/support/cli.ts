/** Runs the built CLI (`dist/cli/main.js`) as a user would. */
import type { ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { startListening } from './processes.js'

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))

export interface Server {
  process: ChildProcess
  url: string
  lines: string[]
}

/** Starts `entity-registry serve` and waits for its "listening on" line. */
export async function startServer(args: string[], env: Record<string, string> = {}): Promise<Server> {
  return startListening(process.execPath, [CLI, 'serve', '--port', '0', ...args], { env: { ENTITY_REGISTRY_API_KEYS: '', ...env } })
}
