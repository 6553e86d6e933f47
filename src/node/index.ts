/**
 * `entity-registry/node`: what needs Node's built-ins. The Node adapter (node:http), the file blob
 * store (node:fs), the NDJSON import, which reads rendition files from disk, and the nickname list
 * search reads from the package's assets.
 */
export { serve, toNodeListener, answerClientError, answerConnect, type FetchHandler, type AnsweringHandler, type NodeHandlerOptions, type RunningServer, type ServeOptions } from '../../adapters/node.js'
export { createFileBlobStore } from '../blobs/file-blob-store.js'
export { importNdjson, parseOperation, SnapshotRefusedError, type DeleteLimit, type ImportOptions, type ImportReport, type Line, type LineSource } from '../warehouse/import.js'
export { OverlongLine } from '../warehouse/record-limits.js'
export { openEmbeddedRegistry, type EmbeddedRegistry, type EmbeddedRegistryOptions } from './embedded-registry.js'
export { loadNicknames } from './nicknames.js'
export { loadWordRelatives } from './word-relatives.js'
export { createWorkerTextExtractor, type WorkerTextExtractor } from './text-worker.js'
export { readLines, type ReadLinesOptions } from './read-lines.js'
export { collectAfterCrowds, type CollectAfterCrowdsOptions } from './collect-after-crowds.js'
export { keepHeapUnder, type HeapCeilingOptions } from './heap-ceiling.js'
