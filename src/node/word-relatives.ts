import { readFile } from 'node:fs/promises'
import { gunzipSync } from 'node:zlib'
import { bundledAsset } from '../bundled-asset.js'
import { parseWordRelatives, type WordRelatives } from '../search/word-relatives.js'

/** The WordNet relatives shipped in the package (assets/word-relatives.txt.gz, WordNet 3.1's license), for `createSearch`. */
export async function loadWordRelatives(): Promise<WordRelatives> {
  return parseWordRelatives(gunzipSync(await readFile(bundledAsset('word-relatives.txt.gz'))).toString('utf8'))
}
