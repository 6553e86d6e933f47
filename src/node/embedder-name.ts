/** What an `--embedder` value may be, as said in errors. */
export const EMBEDDER_NAMES = 'words or transformers:DIR'

/**
 * The embedder an `--embedder` value names: `words` (the bundled word vectors) or `transformers:DIR`
 * (a transformers.js model in DIR); null for anything else. Apart from search-setup, so that the
 * argument parser checks it without loading the embedders.
 */
export function parseEmbedderName(name: string): { kind: 'words' } | { kind: 'transformers'; modelPath: string } | null {
  if (name === 'words') return { kind: 'words' }
  const modelPath = name.startsWith('transformers:') ? name.slice('transformers:'.length) : ''
  return modelPath === '' ? null : { kind: 'transformers', modelPath }
}
