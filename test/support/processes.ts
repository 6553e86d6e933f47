/** Servers started as a user starts them (a CLI, `npm start` in an example), in processes of their own. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

export interface ListeningProcess {
  process: ChildProcess
  /** The URL of the `listening on URL` line. */
  url: string
  /** What the process printed on stdout so far. */
  lines: string[]
  /** Stops the process and everything it started (npm starts the server as its child). */
  stop(): Promise<void>
}

/**
 * Starts `command` in a process group of its own and waits for its `listening on URL` line; if it
 * exits first, the error shows what it printed on both streams.
 */
export async function startListening(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<ListeningProcess> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  const lines: string[] = []
  // Kept for the failure message, and passed on so that a test run's log shows it too.
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
    process.stderr.write(chunk)
  })
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${lines.join('\n')}\n${stderr}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line)
      const match = /^listening on (http:\/\/\S+)$/.exec(line)
      if (match) resolve(match[1]!)
    })
  })
  const stop = async () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    process.kill(-child.pid, 'SIGTERM')
    await exited
  }
  return { process: child, url, lines, stop }
}

/** An example's directory, installed as its README says (`npm install`) unless it was already. */
export function installedExample(name: string): string {
  const directory = fileURLToPath(new URL(`../../examples/${name}/`, import.meta.url))
  if (!existsSync(join(directory, 'node_modules'))) {
    const install = spawnSync(npm, ['install', '--no-audit', '--no-fund'], { cwd: directory, encoding: 'utf8', timeout: 240_000 })
    if (install.status !== 0) throw new Error(`npm install in examples/${name} failed (${install.status ?? install.signal}):\n${install.stdout}\n${install.stderr}`)
  }
  return directory
}
