// Durable Object SQL: cursors, rows, counters, errors and transactionSync, as workerd returns them.
import { describe, outcomeSync } from "./describe.js";

const TYPES_DDL = "CREATE TABLE types (i INTEGER, r REAL, s TEXT, b BLOB, n)";
const TYPES_ROW = "INSERT INTO types VALUES (1, 2.5, 'text 日本 🎉', x'00ff10', NULL)";

// What the counters say after one statement, run on its own cursor and read to the end.
function counted(sql, sql_exec, ...bindings) {
  const cursor = sql_exec(sql, ...bindings);
  const rows = cursor.toArray();
  return {
    sql,
    rows: describe(rows),
    columnNames: describe(cursor.columnNames),
    rowsRead: cursor.rowsRead,
    rowsWritten: cursor.rowsWritten,
  };
}

function cursorSection(sql) {
  const exec = (query, ...bindings) => sql.exec(query, ...bindings);
  exec(TYPES_DDL);
  exec(TYPES_ROW);
  exec("INSERT INTO types VALUES (9007199254740991, -0.5, '', x'', NULL)");
  const out = {};

  const fresh = exec("SELECT i, r, s, b, n FROM types ORDER BY rowid");
  out.cursor_before_reading = describe(fresh);
  out.cursor_is_iterable = typeof fresh[Symbol.iterator] === "function";
  out.cursor_iterator_is_itself = fresh[Symbol.iterator]() === fresh;
  out.next_first = describe(fresh.next());
  out.next_second = describe(fresh.next());
  out.next_after_end = describe(fresh.next());
  out.next_again_after_end = describe(fresh.next());
  out.cursor_after_reading = describe(fresh);

  out.toArray = describe(exec("SELECT i, r, s, b, n FROM types ORDER BY rowid").toArray());
  const partial = exec("SELECT i FROM types ORDER BY rowid");
  partial.next();
  out.toArray_after_one_next = describe(partial.toArray());

  const iterated = [];
  for (const row of exec("SELECT i, s FROM types ORDER BY rowid")) iterated.push(row);
  out.for_of_rows = describe(iterated);

  out.one_of_one_row = outcomeSync(() => exec("SELECT i, r, s, b, n FROM types WHERE i = 1").one());
  out.one_of_no_row = outcomeSync(() => exec("SELECT i FROM types WHERE i = 0").one());
  out.one_of_two_rows = outcomeSync(() => exec("SELECT i FROM types").one());
  out.one_of_insert = outcomeSync(() => exec("INSERT INTO types (i) VALUES (3)").one());
  exec("DELETE FROM types WHERE i = 3");

  const raw = exec("SELECT i, s, n FROM types ORDER BY rowid").raw();
  out.raw_iterator = describe(raw);
  out.raw_is_iterable = typeof raw[Symbol.iterator] === "function";
  out.raw_next = describe(raw.next());
  out.raw_toArray_rest = describe(raw.toArray());
  out.raw_toArray = describe(exec("SELECT i, s, n FROM types ORDER BY rowid").raw().toArray());
  out.raw_for_of = describe([...exec("SELECT i FROM types ORDER BY rowid").raw()]);

  out.duplicate_column_names = describe(exec("SELECT 1 AS a, 2 AS a").toArray());
  out.duplicate_column_names_raw = describe(exec("SELECT 1 AS a, 2 AS a").raw().toArray());
  out.columnNames_select = describe(exec("SELECT i AS first, s FROM types").columnNames);
  out.columnNames_expression = describe(exec("SELECT 1 + 1, count(*) FROM types").columnNames);
  out.columnNames_insert = describe(exec("INSERT INTO types (i) VALUES (4)").columnNames);
  exec("DELETE FROM types WHERE i = 4");
  out.columnNames_ddl = describe(exec("CREATE TABLE IF NOT EXISTS empty (x)").columnNames);
  out.empty_select_toArray = describe(exec("SELECT x FROM empty").toArray());
  out.empty_select_columnNames = describe(exec("SELECT x FROM empty").columnNames);

  out.integer_past_2_53_literal = outcomeSync(() => exec("SELECT 9007199254740993 AS v").toArray());
  out.integer_2_63_minus_1_literal = outcomeSync(() => exec("SELECT 9223372036854775807 AS v").toArray());
  out.integer_2_53_minus_1 = outcomeSync(() => exec("SELECT 9007199254740991 AS v").one());
  out.real_values = outcomeSync(() => exec("SELECT 0.1 AS a, 1e300 * 1e300 AS inf, 1.0 AS whole").one());
  out.integer_division = outcomeSync(() => exec("SELECT 7 / 2 AS a, 7 / 2.0 AS b").one());
  out.typeof_columns = outcomeSync(() => exec("SELECT typeof(i) AS ti, typeof(r) AS tr, typeof(s) AS ts, typeof(b) AS tb, typeof(n) AS tn FROM types WHERE i = 1").one());

  // Values bound as parameters: what each JavaScript type becomes (or why it is refused).
  const bound = (v) => outcomeSync(() => exec("SELECT ? AS v, typeof(?) AS t", v, v).one());
  out.bind = {
    null: bound(null),
    undefined: bound(undefined),
    true: bound(true),
    false: bound(false),
    integer: bound(42),
    negative_zero: bound(-0),
    float: bound(0.5),
    whole_float: bound(3.0),
    integer_past_2_53: bound(2 ** 53 + 2),
    nan: bound(NaN),
    infinity: bound(Infinity),
    string: bound("text 日本 🎉"),
    empty_string: bound(""),
    bigint: bound(5n),
    bigint_past_2_63: bound(2n ** 64n),
    uint8array: bound(new Uint8Array([0, 255, 16])),
    arraybuffer: bound(new Uint8Array([1, 2]).buffer),
    date: bound(new Date(0)),
    object: bound({ a: 1 }),
    array: bound([1, 2]),
  };
  out.bind_too_few = outcomeSync(() => exec("SELECT ? AS a, ? AS b", 1).one());
  out.bind_too_many = outcomeSync(() => exec("SELECT ? AS a", 1, 2).one());
  out.bind_numbered = outcomeSync(() => exec("SELECT ?2 AS a, ?1 AS b", "one", "two").one());
  out.bind_named = outcomeSync(() => exec("SELECT :x AS a", 1).one());

  out.errors = {
    syntax: outcomeSync(() => exec("SELEC 1")),
    no_such_table: outcomeSync(() => exec("SELECT * FROM missing")),
    no_such_column: outcomeSync(() => exec("SELECT missing FROM types")),
    not_null: outcomeSync(() => {
      exec("CREATE TABLE IF NOT EXISTS strict_t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
      return exec("INSERT INTO strict_t (k, v) VALUES ('a', NULL)");
    }),
    unique: outcomeSync(() => {
      exec("INSERT INTO strict_t (k, v) VALUES ('u', 1)");
      return exec("INSERT INTO strict_t (k, v) VALUES ('u', 2)");
    }),
    begin_transaction: outcomeSync(() => exec("BEGIN TRANSACTION")),
    savepoint: outcomeSync(() => exec("SAVEPOINT s")),
    pragma_not_allowed: outcomeSync(() => exec("PRAGMA journal_mode")),
    empty_statement: outcomeSync(() => exec("")),
    sqlite_master_write: outcomeSync(() => exec("DELETE FROM sqlite_master")),
    underscore_cf_table: outcomeSync(() => exec("CREATE TABLE _cf_mine (x)")),
  };
  out.multiple_statements = outcomeSync(() =>
    exec("CREATE TABLE IF NOT EXISTS multi (x); INSERT INTO multi VALUES (1); SELECT x FROM multi").toArray(),
  );
  out.multiple_statements_counts = (() => {
    const c = exec("INSERT INTO multi VALUES (2); INSERT INTO multi VALUES (3); SELECT count(*) AS n FROM multi");
    const rows = describe(c.toArray());
    return { rows, rowsRead: c.rowsRead, rowsWritten: c.rowsWritten, columnNames: describe(c.columnNames) };
  })();
  out.exec_returns_cursor_for_ddl = describe(exec("CREATE TABLE IF NOT EXISTS ddl_probe (x)"));
  return out;
}

function countersSection(sql) {
  const exec = (query, ...bindings) => sql.exec(query, ...bindings);
  exec("CREATE TABLE counts (id INTEGER PRIMARY KEY, k TEXT, v INTEGER)");
  const out = {};
  const ddl = exec("CREATE TABLE counts_ddl_probe (x)");
  ddl.toArray();
  out.create_table = { rowsRead: ddl.rowsRead, rowsWritten: ddl.rowsWritten };
  out.insert_one = counted("INSERT INTO counts (k, v) VALUES ('a', 1)", exec);
  out.insert_three = counted("INSERT INTO counts (k, v) VALUES ('b', 2), ('c', 3), ('d', 4)", exec);
  out.select_all = counted("SELECT k, v FROM counts", exec);
  out.select_by_rowid = counted("SELECT k FROM counts WHERE id = 2", exec);
  out.select_count = counted("SELECT count(*) AS n FROM counts", exec);
  out.select_scan_filter = counted("SELECT k FROM counts WHERE v = 3", exec);
  out.update_one = counted("UPDATE counts SET v = 10 WHERE id = 1", exec);
  out.update_none = counted("UPDATE counts SET v = 10 WHERE id = 99", exec);
  exec("CREATE INDEX counts_by_k ON counts (k)");
  out.insert_with_one_index = counted("INSERT INTO counts (k, v) VALUES ('e', 5)", exec);
  out.select_by_index = counted("SELECT v FROM counts WHERE k = 'e'", exec);
  out.update_indexed_column = counted("UPDATE counts SET k = 'f' WHERE id = 5", exec);
  out.update_unindexed_column = counted("UPDATE counts SET v = 6 WHERE id = 5", exec);
  exec("CREATE TABLE audit (n INTEGER)");
  exec("CREATE TRIGGER counts_audit AFTER INSERT ON counts BEGIN INSERT INTO audit VALUES (new.v); END");
  out.insert_with_index_and_trigger = counted("INSERT INTO counts (k, v) VALUES ('g', 7)", exec);
  out.delete_one = counted("DELETE FROM counts WHERE id = 1", exec);
  out.delete_all = counted("DELETE FROM counts", exec);
  out.upsert = (() => {
    exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)");
    const first = counted("INSERT INTO kv VALUES ('x', 1) ON CONFLICT (k) DO UPDATE SET v = excluded.v", exec);
    const second = counted("INSERT INTO kv VALUES ('x', 2) ON CONFLICT (k) DO UPDATE SET v = excluded.v", exec);
    return { first, second };
  })();
  out.returning = counted("INSERT INTO kv VALUES ('y', 3) RETURNING k, v", exec);
  // Counters grow while the cursor is read, not when exec() returns.
  const lazy = exec("SELECT k FROM kv");
  const before = { rowsRead: lazy.rowsRead, rowsWritten: lazy.rowsWritten };
  lazy.next();
  const afterOne = { rowsRead: lazy.rowsRead, rowsWritten: lazy.rowsWritten };
  lazy.toArray();
  out.select_read_lazily = { before, afterOne, afterAll: { rowsRead: lazy.rowsRead, rowsWritten: lazy.rowsWritten } };
  const lazyInsert = exec("INSERT INTO kv VALUES ('z', 4)");
  out.insert_counted_before_reading = { rowsRead: lazyInsert.rowsRead, rowsWritten: lazyInsert.rowsWritten };
  return out;
}

function transactionSection(storage) {
  const sql = storage.sql;
  sql.exec("CREATE TABLE tx (v INTEGER)");
  const count = () => sql.exec("SELECT count(*) AS n FROM tx").one().n;
  const out = {};
  out.returns_object = outcomeSync(() =>
    storage.transactionSync(() => {
      sql.exec("INSERT INTO tx VALUES (1)");
      return { inserted: 1, list: [1, "x"] };
    }),
  );
  out.returns_number = outcomeSync(() => storage.transactionSync(() => 42));
  out.returns_undefined = outcomeSync(() => storage.transactionSync(() => {}));
  out.returns_cursor = outcomeSync(() => storage.transactionSync(() => sql.exec("SELECT v FROM tx")));
  out.returns_promise = outcomeSync(() => storage.transactionSync(async () => 1));
  out.rows_after_commit = count();
  out.throws = outcomeSync(() =>
    storage.transactionSync(() => {
      sql.exec("INSERT INTO tx VALUES (2)");
      throw new RangeError("rolled back on purpose");
    }),
  );
  out.rows_after_throw = count();
  out.throws_non_error = outcomeSync(() =>
    storage.transactionSync(() => {
      throw "a string";
    }),
  );
  out.sql_error_inside = outcomeSync(() =>
    storage.transactionSync(() => {
      sql.exec("INSERT INTO tx VALUES (3)");
      sql.exec("INSERT INTO missing VALUES (1)");
    }),
  );
  out.rows_after_sql_error = count();
  let inner;
  out.nested = outcomeSync(() =>
    storage.transactionSync(() => {
      sql.exec("INSERT INTO tx VALUES (4)");
      try {
        storage.transactionSync(() => {
          sql.exec("INSERT INTO tx VALUES (5)");
          throw new Error("inner fails");
        });
      } catch (error) {
        inner = error;
      }
      return count();
    }),
  );
  out.nested_inner_error = describe(inner);
  out.rows_after_nested = count();
  out.not_a_function = outcomeSync(() => storage.transactionSync(42));
  out.arguments_given_to_callback = outcomeSync(() => storage.transactionSync((...args) => args.length));
  return out;
}

export function recordSql(ctx) {
  const storage = ctx.storage;
  return {
    storage: describe(storage),
    sql: describe(storage.sql),
    cursors: cursorSection(storage.sql),
    counters: countersSection(storage.sql),
    transactionSync: transactionSection(storage),
    databaseSize: describe(storage.sql.databaseSize),
  };
}
