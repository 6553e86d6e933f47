import { readFile } from 'node:fs/promises'
import { bundledAsset } from '../bundled-asset.js'
import { parseNicknames, type Nicknames } from '../search/nicknames.js'

/** The nickname list shipped in the package (assets/nicknames/, Apache-2.0), for `createSearch`. */
export async function loadNicknames(): Promise<Nicknames> {
  return parseNicknames(await readFile(bundledAsset('nicknames/names.csv'), 'utf8'))
}
