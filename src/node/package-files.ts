import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A file shipped in this package (`package.json`, `demo/entities.jsonl`), looked for from this module upwards. */
export function packageFile(path: string): string {
  let directory = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(directory, path))) {
    const parent = dirname(directory)
    if (parent === directory) throw new Error(`${path} is missing from this installation`)
    directory = parent
  }
  return join(directory, path)
}

/** The version in the package's package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version
}
