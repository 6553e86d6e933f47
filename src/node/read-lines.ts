import { open } from 'node:fs/promises'

/**
 * The lines of a text file (UTF-8; `\n` or `\r\n`), read in chunks. Not node:readline: under Deno
 * (2.9) its async iterator sometimes ends early on a loaded machine, and an import would lose the
 * rest of the file without a word (an import of the demo data applied 517 of 685 lines).
 */
export async function* readLines(file: string, chunkSize = 64 * 1024): AsyncGenerator<string> {
  const handle = await open(file, 'r')
  try {
    const decoder = new TextDecoder('utf-8')
    const buffer = new Uint8Array(chunkSize)
    let pending = ''
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, chunkSize, null)
      pending += decoder.decode(buffer.subarray(0, bytesRead), { stream: bytesRead > 0 })
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) yield line.endsWith('\r') ? line.slice(0, -1) : line
      if (bytesRead === 0) break
    }
    if (pending !== '') yield pending.endsWith('\r') ? pending.slice(0, -1) : pending
  } finally {
    await handle.close()
  }
}
