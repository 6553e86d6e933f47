/** Runs the built CLI (`dist/cli/main.js`) as a user would. */
import { fileURLToPath } from 'node:url'
import { startListening, type ListeningProcess } from './processes.js'

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))

export type Server = ListeningProcess

/** Starts `entity-registry serve` and waits for its "listening on" line. */
export async function startServer(args: string[], env: Record<string, string> = {}): Promise<Server> {
  return startListening(process.execPath, [CLI, 'serve', '--port', '0', ...args], { env: { ENTITY_REGISTRY_API_KEYS: '', ...env } })
}

/** The admin listener's address (`serve --admin-port`), from the line serve prints for it. */
export function adminUrlOf(server: Server): string {
  const url = /^admin \(\/live, \/ready, \/metrics\) on (http:\/\/\S+)$/.exec(server.lines.find((line) => line.startsWith('admin ')) ?? '')?.[1]
  if (url === undefined) throw new Error(`serve printed no admin address: ${server.lines.join('\n')}`)
  return url
}
