export { type ChangedEntities, createResidentSearchIndex, type ResidentSearchIndex, type ResidentSearchIndexOptions } from './resident-search-index.js'
