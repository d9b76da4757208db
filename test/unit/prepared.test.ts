import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepared } from '../../src/db/prepared.js';
import { createTestDatabase, databaseLabel, type TestDatabase } from '../support/database.js';
import { createUser } from '../support/factories.js';

describe(`prepared queries (${databaseLabel})`, () => {
  let database: TestDatabase;
  let ada: string;
  let grace: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    ada = (await createUser(database.db, { name: 'Ada Lovelace' })).id;
    grace = (await createUser(database.db, { name: 'Grace Hopper' })).id;
  });
  afterAll(() => database.close());

  const userById = prepared((db, { id }: { id: string }) => db.selectFrom('users').select(['id', 'name']).where('id', '=', id));

  it('runs the query once compiled with the values of each call', async () => {
    expect(await userById(database.db, { id: ada })).toEqual([{ id: ada, name: 'Ada Lovelace' }]);
    expect(await userById(database.db, { id: grace })).toEqual([{ id: grace, name: 'Grace Hopper' }]);
  });

  it('keeps the constants the query was built with among the values it binds', async () => {
    const named = prepared((db, { id }: { id: string }) =>
      db.selectFrom('users').select('name').where('name', '=', 'Grace Hopper').where(sql<boolean>`${sql.ref('id')} <> ${id}`),
    );
    expect(await named(database.db, { id: ada })).toEqual([{ name: 'Grace Hopper' }]);
    expect(await named(database.db, { id: grace })).toEqual([]);
  });

  it('builds a shape of its own for an argument that is undefined (an optional filter)', async () => {
    const users = prepared((db, { id, name }: { id?: string | undefined; name?: string | undefined }) => {
      let query = db.selectFrom('users').select('id').where('id', 'in', [ada, grace]);
      if (id !== undefined) query = query.where('id', '=', id);
      if (name !== undefined) query = query.where('name', '=', name);
      return query.orderBy('name');
    });
    expect(await users(database.db, { id: undefined, name: undefined })).toEqual([{ id: ada }, { id: grace }]);
    expect(await users(database.db, { id: grace, name: undefined })).toEqual([{ id: grace }]);
    expect(await users(database.db, { id: undefined, name: 'Ada Lovelace' })).toEqual([{ id: ada }]);
    expect(await users(database.db, { id: ada, name: 'Grace Hopper' })).toEqual([]);
  });

  it('refuses an argument used inside a computed value, which one compilation cannot follow', async () => {
    const like = prepared((db, { name }: { name: string }) => db.selectFrom('users').select('id').where('name', 'like', `${name}%`));
    await expect(like(database.db, { name: 'Ada' })).rejects.toThrow(TypeError);
  });

  it('refuses an argument that decides the shape of the query instead of being one of its values', async () => {
    const limited = prepared((db, { all }: { all: boolean }) => db.selectFrom('users').select('id').limit(all ? 100 : 1));
    await expect(limited(database.db, { all: true })).rejects.toThrow(/did not use its arguments all/);
  });
});
