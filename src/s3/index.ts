/** `entity-registry/s3`: rendition blobs on S3-compatible object storage (install `@aws-sdk/client-s3` and `@aws-sdk/lib-storage`). */
export { createS3BlobStore, parseS3Url, type S3BlobStoreOptions, type S3ClientLike } from './s3-blob-store.js'
