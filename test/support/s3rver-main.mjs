// s3rver as a process of its own (test/support/s3-server.ts): node s3rver-main.mjs DIRECTORY PORT BUCKET
import S3rver from 's3rver'

const [directory, port, bucket] = process.argv.slice(2)
const server = new S3rver({ port: Number(port), address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] })
const address = await server.run()
console.log(`listening on http://127.0.0.1:${address.port}`)
