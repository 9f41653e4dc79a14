import type { Db } from '../../src/platform/db/db.ts';

/**
 * A test-only trigger on the inserts of `table`: a row whose `column` is `raise` fails with 'injected
 * fault'; one whose `column` is `sleep` waits 0.3 s first (it keeps its statement in the database).
 * Answers the trigger's removal.
 */
export async function injectInsertFaults(db: Db, table: string, column: string, on: { raise: string; sleep?: string }): Promise<() => Promise<void>> {
  const name = `test_fault_${table}`;
  const literal = (v: string) => `'${v.replace(/'/g, "''")}'`;
  await db.exec(`
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${on.sleep ? `IF NEW.${column} = ${literal(on.sleep)} THEN PERFORM pg_sleep(0.3); END IF;` : ''}
      IF NEW.${column} = ${literal(on.raise)} THEN RAISE EXCEPTION 'injected fault'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER ${name} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();`);
  return () => db.exec(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}();`);
}
