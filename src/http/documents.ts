import { EMPTY_ENTITY_TYPE } from '../contract/fields.js'
import type { PublicSnapshot, StoredChange, StoredEntity } from '../contract/entity.js'
import { extensionOf } from './extension.js'
import type { Links } from './links.js'

/** `attributes` of a snapshot: every contract field but `type`, and texts with download links. */
export function attributesOf(entityId: string, snapshot: PublicSnapshot, links: Links) {
  const { type: _type, texts, ...fields } = snapshot
  return {
    ...fields,
    texts: texts.map((text) => ({
      ...text,
      renditions: text.renditions.map(({ sha256: _sha256, ...rendition }) => ({
        ...rendition,
        links: { content: links.rendition(entityId, rendition.renditionId, extensionOf(rendition)) },
      })),
    })),
  }
}

export function entityResource(entity: StoredEntity, links: Links) {
  return {
    type: entity.snapshot.type ?? EMPTY_ENTITY_TYPE,
    id: entity.id,
    attributes: attributesOf(entity.id, entity.snapshot, links),
    links: { self: links.entity(entity.id) },
  }
}

export function changeResource(change: StoredChange, links: Links) {
  return {
    type: 'entity-change',
    id: change.changeId,
    attributes: {
      ...attributesOf(change.entityId, change.snapshot, links),
      changeType: change.changeType,
      changedKeys: change.changedKeys,
      mergedInto: change.mergedInto,
      recordedAt: change.recordedAt,
    },
    relationships: {
      entity: {
        data: { type: change.snapshot.type ?? EMPTY_ENTITY_TYPE, id: change.entityId },
        links: { related: links.entity(change.entityId) },
      },
    },
  }
}
