// A separate writer process for the change-feed tests: upserts `count` entities `<prefix>0..`, each in
// its own transaction, through the built package. Usage: node feed-writer.mjs LOCATION PREFIX COUNT
import { openStore } from '../../dist/kysely/index.js'

const [location, prefix, count] = process.argv.slice(2)
const store = await openStore(location)
for (let index = 0; index < Number(count); index++) {
  await store.warehouse.upsert({ id: `${prefix}${index.toString().padStart(5, '0')}`, type: 'person', name: `${prefix} ${index}` })
}
await store.close()
process.stdout.write('done\n')
