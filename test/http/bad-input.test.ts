import fc from 'fast-check'
import { expect, it } from 'vitest'
import { errorDocumentSchema } from '../../src/contract/schemas.js'
import { describeEachStore, storeDialects } from '../stores/each-store.js'
import { useDemoRegistry } from '../support/demo.js'

const PATHS = ['/v1/entities', '/v1/entities/changes', '/v1/entities/a000039', '/v1/entities/hr3590111/renditions/rnd_00000000000000000000000000000000.html']
const NAMES = ['filter', 'page[after]', 'page[limit]', 'page[offset]', 'sort', 'include', 'q', '_x', 'filter[type]']
const text = fc.string({ unit: fc.constantFrom(...'type:person title~"\\,.-*><=[]%_é 0aZ\u0000\u{1F600}'.split('')), maxLength: 40 })
const requests = fc.record({
  path: fc.constantFrom(...PATHS),
  parameters: fc.array(fc.tuple(fc.constantFrom(...NAMES), fc.oneof(text, fc.string({ maxLength: 20 }))), { maxLength: 4 }),
})

describeEachStore(storeDialects, 'bad input', (dialect) => {
  const { get } = useDemoRegistry(dialect)

  it('answers any query string with 200 or a 4xx error document, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(requests, async ({ path, parameters }) => {
        const query = new URLSearchParams(parameters).toString()
        const response = await get(`${path}${query ? `?${query}` : ''}`)
        expect(response.status, `${path}?${query}`).toBeLessThan(500)
        if (response.status >= 400) {
          const document = errorDocumentSchema.parse(await response.json())
          expect(document.errors[0]!.code).toMatch(/^[a-z_]+$/)
        } else {
          await response.arrayBuffer()
        }
      }),
      { numRuns: dialect.name === 'memory' ? 400 : 150 },
    )
  })
})
