import { DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { isDatabaseUnavailable } from '../../../src/db/unavailable';

/** An error as node-postgres or Node's net module makes it: a message and a code. */
const driverError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

describe('isDatabaseUnavailable', () => {
  test.each([
    ['a refused connection', driverError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a refused connection as MikroORM wraps it', new DriverException(driverError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))],
    ['a refused connection to several addresses', new AggregateError([driverError('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], '')],
    ['a fast shutdown', driverError('terminating connection due to administrator command', '57P01')],
    ['a server starting up', driverError('the database system is starting up', '57P03')],
    ['a closed socket', driverError('Connection terminated unexpectedly')],
    ['an exhausted pool', Object.assign(new Error('Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' })],
  ])('%s is unavailability', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  test.each([
    ['a unique violation', new UniqueConstraintViolationException(driverError('duplicate key value', '23505'))],
    ['a syntax error', driverError('syntax error at or near "selec"', '42601')],
    ['a bug', new TypeError('cannot read properties of undefined')],
    ['not an error', 'ECONNREFUSED'],
  ])('%s is not', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
