import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { isStalePreparedStatement, PREPARED } from '../../src/db/prepared-statements.js';
import { withDuplicateLocks } from '../../src/register/trainees/repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** Marked statements run as named prepared statements, and survive a migration that changes what they return. */
let database: TestDatabase;
let handle: DatabaseHandle;

beforeAll(async () => {
  database = await createTestDatabase();
  // One connection, so every call below runs on the connection that prepared the statement.
  handle = createDatabase(database.url, { max: 1 });
  await sql`create table prepared_probe (a int)`.execute(handle.db);
  await sql`insert into prepared_probe values (1)`.execute(handle.db);
});
afterAll(async () => {
  await handle?.close();
  await database?.drop();
});

const preparedOnConnection = async () =>
  (
    await sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(
      handle.db,
    )
  ).rows.map((r) => r.statement);

describe('prepared statements', () => {
  it('prepares a marked statement once per connection and leaves unmarked ones unnamed', async () => {
    const marked = (n: number) => sql<{ n: number }>`${sql.raw(PREPARED)}select ${n}::int + 1 as n`.execute(handle.db);
    expect((await marked(1)).rows).toEqual([{ n: 2 }]);
    expect((await marked(41)).rows).toEqual([{ n: 42 }]);
    await sql`select ${2}::int as unmarked`.execute(handle.db);
    expect(await preparedOnConnection()).toEqual([`${PREPARED}select $1::int + 1 as n`]);
  });

  it('prepares a statement again after a migration changes its result type', async () => {
    const readAll = () => sql`${sql.raw(PREPARED)}select * from prepared_probe`.execute(handle.db);
    expect((await readAll()).rows).toEqual([{ a: 1 }]);
    await sql`alter table prepared_probe add column b int default 7`.execute(handle.db);
    // The statement prepared before the change is refused once, and recognised as stale …
    const refused = await readAll().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isStalePreparedStatement(refused)).toBe(true);
    // … then the connection prepares it afresh.
    expect((await readAll()).rows).toEqual([{ a: 1, b: 7 }]);
  });

  it('runs a register write transaction again when its prepared statement went stale, keeping nothing of the first run', async () => {
    const store = async (attempts: string[]) =>
      withDuplicateLocks(handle.db, ['prepared-probe'], async (trx) => {
        await sql`insert into prepared_probe (a) values (${attempts.length + 100})`.execute(trx);
        attempts.push('run');
        return (await sql`${sql.raw(PREPARED)}select * from prepared_probe order by a`.execute(trx)).rows;
      });
    await sql`delete from prepared_probe where a >= 100`.execute(handle.db);
    expect(await store([])).toHaveLength(2);
    await sql`alter table prepared_probe add column c text default 'x'`.execute(handle.db);
    const attempts: string[] = [];
    const rows = await store(attempts);
    expect(attempts).toEqual(['run', 'run']);
    // The first run's insert was rolled back: one row of 100 (the earlier call's) and the second run's 101.
    expect(rows).toEqual([
      { a: 1, b: 7, c: 'x' },
      { a: 100, b: 7, c: 'x' },
      { a: 101, b: 7, c: 'x' },
    ]);
  });
});
