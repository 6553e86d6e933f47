/** The exported store kit, run on every bundled store: the same cases a custom store is held to. */
import { afterEach, beforeEach, describe, it } from 'vitest'
import { describeEntityStore } from '../../src/testing/index.js'
import { storeDialects } from './each-store.js'

for (const dialect of storeDialects) {
  if (dialect.skipReason === null) describeEntityStore(`store kit [${dialect.name}]`, dialect.open, { describe, it, beforeEach, afterEach })
  else describe.skip(`store kit [${dialect.name}] skipped: ${dialect.skipReason}`, () => {})
}
