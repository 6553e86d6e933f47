// The registry as a Hattip handler, served by Hattip's Node adapter: what a user writes to run it
// on any of Hattip's platforms. Prints `listening on URL` as the CLI does.
import { createServer } from '@hattip/adapter-node'
import { createHattipHandler } from 'entity-registry/hattip'
import { openEmbeddedRegistry } from 'entity-registry/node'

const { registry, close } = await openEmbeddedRegistry({
  data: process.env.DATA_DIR ?? '.data/hattip',
  demo: true,
  apiKeys: (process.env.ENTITY_REGISTRY_API_KEYS ?? '').split(',').filter((key) => key !== ''),
  rateLimit: Number(process.env.RATE_LIMIT ?? 600),
  explorer: true,
})
const server = createServer(createHattipHandler(registry))
server.listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address()
  console.log(`listening on http://${address}:${port}`)
})
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close()
    server.closeAllConnections()
    void close().then(() => process.exit(0))
  })
}
