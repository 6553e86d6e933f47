/**
 * A JSON:API resource as JSON text, with the raw control character LINK_BASE where the registry's
 * link base (origin and mount path, known only per request) goes. A store keeps each entity's
 * rendered when it is written, and a list page is those texts joined: no parse or serialisation per
 * request. JSON.stringify writes every control character escaped, so no value can contain it raw.
 *
 * Stored templates must change with their rendering (resource-json.ts): a change to it needs a
 * migration that renders the stored ones anew. Apart from the rendering, so that the entity types
 * that hold a template need not import it.
 */
export type ResourceTemplate = string

/** Where the link base goes in a template. */
export const LINK_BASE = '\u0001'
