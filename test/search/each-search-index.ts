/** Every search index a suite runs against: the memory reference and LanceDB on a temporary directory. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLancedbSearchIndex } from '../../src/lancedb/index.js'
import { createMemorySearchIndex } from '../../src/memory/memory-search-index.js'
import type { SearchIndex } from '../../src/ports/search-index.js'

export interface SearchIndexKind {
  name: string
  open(dimensions: number): Promise<{ index: SearchIndex; dispose(): Promise<void> }>
}

export const searchIndexKinds: SearchIndexKind[] = [
  { name: 'memory', open: async () => ({ index: createMemorySearchIndex(), dispose: async () => {} }) },
  {
    name: 'lancedb',
    async open(dimensions) {
      const directory = await mkdtemp(join(tmpdir(), 'er-lancedb-'))
      const index = await createLancedbSearchIndex({ uri: directory, dimensions })
      return {
        index,
        async dispose() {
          await index.close()
          await rm(directory, { recursive: true, force: true })
        },
      }
    },
  },
]
