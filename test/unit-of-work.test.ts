import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { insideUnitOfWork, type Db } from '../src/platform/db/db.ts';
import { closeTestDatabase, testDatabase } from './helpers/service.ts';

/**
 * Issue 29: db.atomic, the unit of work an administrative action and its audit entry share, on
 * PGlite and PostgreSQL. Everything a unit's code sends through the Db is one transaction.
 */
let db: Db;
before(async () => {
  db = (await testDatabase()).db;
  await db.exec('CREATE TABLE unit_test (name text PRIMARY KEY)');
});
after(async () => {
  await db.exec('DROP TABLE unit_test');
  await closeTestDatabase();
});

const names = async () => (await db.query<{ name: string }>('SELECT name FROM unit_test ORDER BY name')).map((r) => r.name);
const insert = (name: string) => db.query('INSERT INTO unit_test (name) VALUES ($1)', [name]);
const clear = () => db.query('DELETE FROM unit_test');

describe('units of work (issue 29)', () => {
  it('when the unit throws, then statements, transactions and nested transactions inside it are all rolled back', async () => {
    await clear();
    await assert.rejects(db.atomic(async () => {
      assert.equal(insideUnitOfWork(), true);
      await insert('plain');
      await db.tx(async (q) => {
        await q.query("INSERT INTO unit_test (name) VALUES ('in-tx')");
        await db.tx((q2) => q2.query("INSERT INTO unit_test (name) VALUES ('nested')"));
      });
      assert.deepEqual(await names(), ['in-tx', 'nested', 'plain'], 'the unit reads its own writes');
      throw new Error('the action failed');
    }), /the action failed/);
    assert.equal(insideUnitOfWork(), false);
    assert.deepEqual(await names(), []);
  });

  it('when a statement or a transaction inside fails, then only its own work is undone and the unit commits the rest', async () => {
    await clear();
    await db.atomic(async () => {
      await insert('a');
      await assert.rejects(insert('a'), /duplicate key|unique/);
      await assert.rejects(db.tx(async (q) => {
        await q.query("INSERT INTO unit_test (name) VALUES ('undone')");
        throw new Error('refused');
      }), /refused/);
      // Concurrent transactions of one unit run one after the other, never interleaved.
      await Promise.all(['c1', 'c2', 'c3'].map((n) => db.tx((q) => q.query('INSERT INTO unit_test (name) VALUES ($1)', [n]))));
      await insert('b');
    });
    assert.deepEqual(await names(), ['a', 'b', 'c1', 'c2', 'c3']);
  });

  it('when a unit is opened inside another, then it joins it; a statement sent after the unit ended goes to the database', async () => {
    await clear();
    let late: (() => Promise<unknown>) | null = null;
    await assert.rejects(db.atomic(async () => {
      await db.atomic(async () => insert('inner'));
      late = () => insert('late');
      throw new Error('outer failed');
    }));
    assert.deepEqual(await names(), [], 'the inner unit was part of the outer one');
    await late!();
    assert.deepEqual(await names(), ['late']);
  });
});
