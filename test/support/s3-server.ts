/** A real S3-protocol server for tests: s3rver on a free port, its objects in a temporary directory. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startListening, type ListeningProcess } from './processes.js'
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver'

/** The credentials s3rver accepts (it checks signatures made with them). */
export const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

export interface S3Server {
  endpoint: string
  bucket: string
  /** The standard AWS environment that points a client (or the CLI) at this server. */
  environment: Record<string, string>
  close(): Promise<void>
}

export async function startS3Server(bucket = 'registry'): Promise<S3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'er-s3-'))
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] })
  const { port } = (await server.run()) as { port: number }
  const endpoint = `http://127.0.0.1:${port}`
  return {
    endpoint,
    bucket,
    environment: environmentOf(endpoint),
    async close() {
      await server.close()
      await rm(directory, { recursive: true, force: true })
    },
  }
}

/** The standard AWS environment that points a client (or the CLI) at `endpoint`. */
export function environmentOf(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey,
    AWS_REGION: 'us-east-1',
  }
}

const S3RVER_MAIN = fileURLToPath(new URL('./s3rver-main.mjs', import.meta.url))

/**
 * s3rver in a process of its own, for fault tests to kill (SIGKILL) or pause (SIGSTOP): started again
 * with the same directory and port, it serves the same objects at the same address.
 */
export function startS3ServerProcess(directory: string, { port = 0, bucket = 'registry' } = {}): Promise<ListeningProcess> {
  return startListening(process.execPath, [S3RVER_MAIN, directory, String(port), bucket])
}
