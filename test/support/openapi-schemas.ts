import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

/**
 * The validator of a JSON:API body an OpenAPI document declares for a GET's answer: the schema in
 * place in the document, so that its references to the components resolve.
 */
export function jsonApiBodyValidator(document: { paths: unknown; components: unknown }): (template: string, status: number) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'openapi.json', paths: document.paths, components: document.components })
  return (template, status) => {
    const pointer = `#/paths/${template.replaceAll('/', '~1')}/get/responses/${status}/content/application~1vnd.api+json/schema`
    const validate = ajv.getSchema(`openapi.json${pointer}`)
    if (validate === undefined) throw new Error(`no JSON:API body is declared for GET ${template} ${status}`)
    return validate
  }
}
