import type { NextConfig } from 'next'

const config: NextConfig = {
  // Loaded by Node at run time, not bundled: the registry opens native modules (better-sqlite3,
  // LanceDB) and reads its bundled demo data and word vectors from its own package directory.
  serverExternalPackages: ['entity-registry', 'better-sqlite3', '@lancedb/lancedb'],
}

export default config
