import { createKeyManager, KeyManagerError, type ApiKeyInfo, type KeyManager, type OrganizationInfo } from '../auth/key-manager.js'
import { openData } from '../node/data-dir.js'
import { createLogger } from '../telemetry/logger.js'
import type { KeysInvocation } from './invocation.js'
import type { Print } from './print.js'
import { UsageError } from './usage-error.js'

/**
 * `keys create|list|revoke` and `orgs list`. A key created is printed alone on standard output; key
 * events go to standard error as JSON lines (pino), for the audit log; a refusal is a usage error.
 */
export async function keysCommand(invocation: KeysInvocation, print: Print): Promise<void> {
  const data = await openData(invocation.data)
  const logger = await createLogger({ destination: 2 })
  const manager = createKeyManager(data.store, { onEvent: (event) => logger.info(event, event.event.replaceAll('_', ' ')) })
  try {
    await run(invocation, manager, print)
  } catch (error) {
    throw error instanceof KeyManagerError ? new UsageError(`${invocation.command}: ${error.message}`) : error
  } finally {
    await new Promise<void>((resolve) => logger.flush(() => resolve()))
    await data.store.close()
  }
}

async function run(invocation: KeysInvocation, manager: KeyManager, print: Print): Promise<void> {
  switch (invocation.command) {
    case 'keys create': {
      const { key } = await manager.createKey({
        org: invocation.org,
        ...(invocation.label === undefined ? {} : { label: invocation.label }),
        ...(invocation.expiresAt === undefined ? {} : { expiresAt: invocation.expiresAt }),
      })
      print(key)
      return
    }
    case 'keys list': {
      const keys = await manager.listKeys(invocation.org === undefined ? {} : { org: invocation.org })
      if (invocation.json) print(JSON.stringify(keys))
      else printTable(print, ['ID', 'ORG', 'LABEL', 'CREATED', 'EXPIRES', 'LAST USED', 'STATE'], keys.map(keyRow))
      return
    }
    case 'keys revoke': {
      const revoked = 'id' in invocation.which ? [await manager.revokeKey(invocation.which.id)] : await manager.revokeOrganization(invocation.which.org)
      print(revoked.length === 0 ? 'no key to revoke: every key of the organization is revoked already' : `revoked ${revoked.map((key) => key.id).join(', ')}`)
      return
    }
    case 'orgs list': {
      const organizations = await manager.listOrganizations()
      if (invocation.json) print(JSON.stringify(organizations))
      else printTable(print, ['ORG', 'CREATED', 'ACTIVE KEYS', 'KEYS'], organizations.map(organizationRow))
      return
    }
  }
}

const keyRow = (key: ApiKeyInfo) => [key.id, key.org, key.label ?? '-', key.createdAt, key.expiresAt ?? 'never', key.lastUsedAt ?? 'never', key.state]
const organizationRow = (org: OrganizationInfo) => [org.name, org.createdAt, String(org.activeKeys), String(org.keys)]

/** Columns padded to their widest cell; labels are free text, so control characters never reach the terminal. */
function printTable(print: Print, header: string[], rows: string[][]): void {
  const cells = [header, ...rows.map((row) => row.map((cell) => cell.replace(/\p{Cc}/gu, ' ')))]
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)))
  for (const row of cells) print(row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '))
}
