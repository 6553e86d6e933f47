/**
 * Whether a connection's server session is its own: the server sees this connection's TCP socket
 * (its four addresses), not a pooler's. Through a transaction pooler (PgBouncer, RDS Proxy,
 * Supavisor) the session the server sees is the pooler's connection, from another port, and it
 * serves other clients between transactions: what lives in a session (a named prepared statement)
 * is not this client's there. A Unix socket, TLS through a proxy, NAT, or a pool that is not `pg`'s
 * answer false: the safe side, where nothing is kept in the session.
 */
export const DIRECT_SESSION_QUERY =
  'select host(inet_client_addr()) as client_address, inet_client_port() as client_port, host(inet_server_addr()) as server_address, inet_server_port() as server_port'

interface SessionAddresses {
  client_address: string | null
  client_port: number | null
  server_address: string | null
  server_port: number | null
}

/** What `pg`'s client holds of its socket (`connection.stream`, a `net.Socket` or a `tls.TLSSocket`). */
interface SocketOf {
  connection?: { stream?: { localAddress?: string; localPort?: number; remoteAddress?: string; remotePort?: number } }
}

/** Whether the session that answered `DIRECT_SESSION_QUERY` with `row` is the connection of `client`. */
export function isDirectSession(client: unknown, row: unknown): boolean {
  const socket = (client as SocketOf).connection?.stream
  const session = row as SessionAddresses | undefined
  if (socket?.localPort === undefined || session?.client_port == null) return false
  const same = (a: string | null | undefined, b: string | null | undefined) => a != null && b != null && unmapped(a) === unmapped(b)
  return (
    session.client_port === socket.localPort &&
    session.server_port === socket.remotePort &&
    same(session.client_address, socket.localAddress) &&
    same(session.server_address, socket.remoteAddress)
  )
}

/** An IPv4 address as IPv6 writes it (`::ffff:127.0.0.1`) is that IPv4 address. */
const unmapped = (address: string) => address.replace(/^::ffff:/i, '')
