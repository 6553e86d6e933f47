#!/usr/bin/env node
// Keeps an exact local copy of a registry, or of a filtered subset of it, with the client's mirror:
// back-fill the list, then follow the change feed from the head the back-fill saw first, seeing
// entities leave the subset too. The checkpoint is kept in a file, so a restart resumes where it was.
//
//   node examples/mirror-feed.mjs BASE_URL API_KEY [--once] [--filter 'GFFS'] [--checkpoint FILE]
//
// --once stops when the copy has caught up with the feed; without it, it polls every 2 seconds.
import { readFileSync, writeFileSync } from 'node:fs'
import { createClient } from 'entity-registry/client'

const [base, key, ...rest] = process.argv.slice(2)
if (!base || !key) {
  console.error('usage: mirror-feed.mjs BASE_URL API_KEY [--once] [--filter GFFS] [--checkpoint FILE]')
  process.exit(2)
}
const option = (name) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined)
const checkpointFile = option('--checkpoint')

/** id -> entity resource: the copy (a real mirror would write it to its own database). */
const copy = new Map()
const client = createClient({ baseUrl: base, apiKey: key })
const { checkpoint } = await client.mirror({
  filter: option('--filter'),
  once: rest.includes('--once'),
  onUpsert: (entity) => void copy.set(entity.id, entity),
  onRemove: (id) => void copy.delete(id),
  ...(checkpointFile && {
    checkpoint: {
      load: () => {
        try {
          return JSON.parse(readFileSync(checkpointFile, 'utf8'))
        } catch {
          return null
        }
      },
      save: (state) => writeFileSync(checkpointFile, JSON.stringify(state)),
    },
  }),
})
console.log(`caught up at ${checkpoint.cursor}: ${copy.size} entities`)
