/** What an `--embedder` value may be, as said in errors. */
export const EMBEDDER_NAMES = 'words, transformers:DIR or none (with --search postgres)'

/**
 * The embedder an `--embedder` value names: `words` (the bundled word vectors), `transformers:DIR`
 * (a transformers.js model in DIR) or `none` (full text and names alone); null for anything else. Apart from search-setup, so that the
 * argument parser checks it without loading the embedders.
 */
export function parseEmbedderName(name: string): { kind: 'words' | 'none' } | { kind: 'transformers'; modelPath: string } | null {
  if (name === 'words' || name === 'none') return { kind: name }
  const modelPath = name.startsWith('transformers:') ? name.slice('transformers:'.length) : ''
  return modelPath === '' ? null : { kind: 'transformers', modelPath }
}
