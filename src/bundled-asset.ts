import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A file of the package's `assets/`: found upwards of this module, wherever the bundler put it. */
export function bundledAsset(path: string): string {
  let directory = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(directory, 'assets', path))) {
    const parent = dirname(directory)
    if (parent === directory) throw new Error(`assets/${path} is missing from this installation`)
    directory = parent
  }
  return join(directory, 'assets', path)
}
