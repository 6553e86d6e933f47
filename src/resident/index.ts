export { createResidentSearchIndex, type ResidentSearchIndexOptions } from './resident-search-index.js'
