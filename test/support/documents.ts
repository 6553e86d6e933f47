import { readFileSync } from 'node:fs'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { expect } from 'vitest'
import type { z } from 'zod'
import { errorDocumentSchema } from '../../src/contract/schemas.js'

const jsonApiSchema = JSON.parse(readFileSync(new URL('../fixtures/jsonapi.schema.json', import.meta.url), 'utf8'))
const ajv = new Ajv2020({ allErrors: true, strict: false })
addFormats.default(ajv)
const validateJsonApi = ajv.compile(jsonApiSchema)

/** Throws unless `body` is a JSON:API document by the official schema. */
export function assertJsonApi(body: unknown): void {
  if (!validateJsonApi(body)) throw new Error(`not a JSON:API document: ${ajv.errorsText(validateJsonApi.errors)}\n${JSON.stringify(body)}`)
}

/** Reads a JSON:API response and checks it against the official schema and the contract's zod schema. */
export async function readDocument<T extends z.ZodType>(response: Response, schema: T): Promise<z.infer<T>> {
  expect(response.headers.get('content-type')).toBe('application/vnd.api+json')
  expect(response.headers.get('access-control-allow-origin')).toBe('*')
  const body = await response.json()
  assertJsonApi(body)
  const parsed = schema.safeParse(body)
  if (!parsed.success) throw new Error(`breaks the contract: ${parsed.error.message}\n${JSON.stringify(body)}`)
  return parsed.data
}

/** Checks an error response: status, code, the parameter at fault, and that nothing internal leaks. */
export async function expectError(response: Response, status: number, code: string, parameter?: string) {
  expect(response.status).toBe(status)
  const text = await response.clone().text()
  expect(text).not.toMatch(/ at .*\.(ts|js):\d+|SELECT|sqlite|node_modules/i)
  const document = await readDocument(response, errorDocumentSchema)
  const [error] = document.errors
  expect(error).toMatchObject({ status: String(status), code })
  expect(error!.title).toBeTruthy()
  expect(error!.detail).toBeTruthy()
  if (parameter !== undefined) expect(error!.source?.parameter).toBe(parameter)
  return error!
}
