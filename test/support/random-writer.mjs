// A separate writer process for the mirror tests: COUNT random operations on persons p0..p59 (creates,
// updates moving them between US-WA and US-OR, deletes, drains, merges), through the built package.
// Usage: node random-writer.mjs LOCATION SEED COUNT
import { openStore } from '../../dist/kysely/index.js'

const [location, seed, count] = process.argv.slice(2)
let state = Number(seed)
/** mulberry32: a small seeded generator, so that a failing run can be replayed. */
const random = () => {
  state = (state + 0x6d2b79f5) | 0
  let t = Math.imul(state ^ (state >>> 15), 1 | state)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const pick = (items) => items[Math.floor(random() * items.length)]
const ids = Array.from({ length: 60 }, (_, index) => `p${index}`)

const store = await openStore(location)
for (let index = 0; index < Number(count); index++) {
  const id = pick(ids)
  const roll = random()
  const operation =
    roll < 0.55
      ? { op: 'upsert', record: { id, type: 'person', name: `${id} v${index}`, jurisdiction: pick(['US-WA', 'US-OR']) } }
      : roll < 0.7
        ? { op: 'delete', id }
        : roll < 0.8
          ? { op: 'drain', id }
          : { op: 'merge', id, into: pick(ids) }
  // Operations the warehouse refuses (a merge into a missing entity, say) are part of the mix.
  await store.warehouse.apply([operation])
  if (index % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 2))
}
await store.close()
process.stdout.write('done\n')
