import { describe, expect, it } from 'vitest'
import { isDependencyUnavailable } from '../../src/ports/dependency.js'
import { isConnectionFailure } from '../../src/kysely/postgres-errors.js'
import { asStoreError } from '../../src/kysely/store-errors.js'

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code })

describe('isConnectionFailure', () => {
  it.each([
    ['connection refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['no Unix socket (the server stopped)', withCode('ENOENT', 'connect ENOENT /var/run/postgresql/.s.PGSQL.5432')],
    ['connection reset', withCode('ECONNRESET')],
    ['a connect timeout', withCode('ETIMEDOUT')],
    ['SQLSTATE 08006 (connection failure)', withCode('08006')],
    ['SQLSTATE 08001 (cannot establish)', withCode('08001')],
    ['57P01 admin shutdown (pg_terminate_backend)', withCode('57P01', 'terminating connection due to administrator command')],
    ['57P02 crash shutdown', withCode('57P02')],
    ['57P03 cannot connect now (starting, stopping)', withCode('57P03', 'the database system is shutting down')],
    ['53300 too many connections', withCode('53300')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['a connect timeout of pg', new Error('Connection terminated due to connection timeout')],
    ['a pool wait timeout', new Error('timeout exceeded when trying to connect')],
    ['a broken client', new Error('Client has encountered a connection error and is not queryable')],
    ['refused on every address', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')])],
  ])('%s is one', (_, error) => {
    expect(isConnectionFailure(error)).toBe(true)
  })

  it.each([
    ['a syntax error', withCode('42601', 'syntax error at or near "selct"')],
    ['a unique violation', withCode('23505')],
    ['a statement cancelled (57014)', withCode('57014')],
    ['a closed client (the store was closed)', new Error('Client was closed and is not queryable')],
    ['no error', 'ECONNREFUSED'],
    ['an AggregateError with a query error', new AggregateError([withCode('ECONNREFUSED'), withCode('42601')])],
  ])('%s is not', (_, error) => {
    expect(isConnectionFailure(error)).toBe(false)
  })
})

describe('asStoreError', () => {
  it('makes a connection failure the store unavailable, naming no address, keeping the cause', () => {
    const cause = withCode('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.7:5432')
    const error = asStoreError(cause)
    expect(isDependencyUnavailable(error) && error.dependency).toBe('store')
    expect((error as Error).message).not.toContain('10.0.0.7')
    expect((error as Error).cause).toBe(cause)
  })

  it('makes a SQLite database locked out the store unavailable too', () => {
    const error = asStoreError(withCode('SQLITE_BUSY', 'database is locked'))
    expect(isDependencyUnavailable(error) && error.dependency).toBe('store')
  })

  it("makes a replica's read cancelled to replay the primary's changes the store unavailable (a retry may succeed)", () => {
    const cause = withCode('40001', 'canceling statement due to conflict with recovery')
    const error = asStoreError(cause)
    expect(isDependencyUnavailable(error) && error.dependency).toBe('store')
    expect((error as Error).cause).toBe(cause)
  })

  it('leaves any other error as it is', () => {
    for (const error of [withCode('23505'), withCode('SQLITE_CONSTRAINT'), withCode('40001', 'could not serialize access due to concurrent update')]) expect(asStoreError(error)).toBe(error)
  })
})
