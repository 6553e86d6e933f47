import { readFile } from 'node:fs/promises'
import { gunzipSync } from 'node:zlib'
import { bundledAsset } from '../bundled-asset.js'
import { parseWordRelatives, type WordRelatives } from '../search/word-relatives.js'

/** The WordNet relatives shipped in the package (assets/wordnet/, under WordNet's license), for `createSearch`. */
export async function loadWordRelatives(): Promise<WordRelatives> {
  return parseWordRelatives(gunzipSync(await readFile(bundledAsset('wordnet/relatives.txt.gz'))).toString('utf8'))
}
