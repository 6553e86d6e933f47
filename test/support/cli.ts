/** Runs the built CLI (`dist/cli/main.js`) as a user would. */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))

export interface Server {
  process: ChildProcess
  url: string
  lines: string[]
}

/** Starts `entity-registry serve` and waits for its "listening on" line. */
export async function startServer(args: string[], env: Record<string, string> = {}): Promise<Server> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    env: { ...process.env, ENTITY_REGISTRY_API_KEYS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  // Kept for the failure message, and passed on so that a test run's log shows it too.
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
    process.stderr.write(chunk)
  })
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${lines.join('\n')}\n${stderr}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line)
      const match = /^listening on (http:\/\/\S+)$/.exec(line)
      if (match) resolve(match[1]!)
    })
  })
  return { process: child, url, lines }
}

