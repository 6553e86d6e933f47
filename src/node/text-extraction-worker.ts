// The thread of `createWorkerTextExtractor`: extracts the text of the bytes it is sent, one at a time.
import { parentPort } from 'node:worker_threads'
import { extractText } from '../texts/extract.js'

parentPort!.on('message', async ({ id, bytes, mime }: { id: number; bytes: Uint8Array; mime: string }) => {
  parentPort!.postMessage({ id, extraction: await extractText(bytes, mime) })
})
