// D1: prepared statements, their results and `meta`, batches, exec and errors.
import { describe, outcome, outcomeSync } from "./describe.js";

// Timings differ from run to run; everything else in a result is fixed by the statements run.
const VARIES = ["meta.duration", "meta.timings.sql_duration_ms", "*.meta.duration", "*.meta.timings.sql_duration_ms"];
const EXEC_VARIES = ["duration"];

export async function recordD1(db) {
  const out = {};
  out.binding = describe(db);
  out.exec_ddl = await outcome(
    () =>
      db.exec(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL, data BLOB, note TEXT)\n" +
          "CREATE INDEX items_by_name ON items (name)",
      ),
    EXEC_VARIES,
  );
  out.exec_two_statements_one_line = await outcome(
    () => db.exec("CREATE TABLE other (x); INSERT INTO other VALUES (1)"),
    EXEC_VARIES,
  );
  out.exec_error = await outcome(() => db.exec("CREATE TABL broken (x)"), EXEC_VARIES);

  const insert = db.prepare("INSERT INTO items (name, score, data, note) VALUES (?1, ?2, ?3, ?4)");
  out.prepared = describe(insert);
  const bound = insert.bind("alpha", 1.5, new Uint8Array([0, 255]), null);
  out.bound = describe(bound);
  out.bind_returns_new_statement = bound !== insert;
  out.run_insert = await outcome(() => bound.run(), VARIES);
  out.run_insert_returning = await outcome(
    () => db.prepare("INSERT INTO items (name, score) VALUES (?, ?) RETURNING id, name").bind("beta", 2).run(),
    VARIES,
  );
  out.all_insert = await outcome(
    () => db.prepare("INSERT INTO items (name, score) VALUES (?, ?)").bind("gamma", 3).all(),
    VARIES,
  );

  const select = db.prepare("SELECT id, name, score, data, note FROM items ORDER BY id");
  out.all = await outcome(() => select.all(), VARIES);
  out.all_no_rows = await outcome(() => db.prepare("SELECT id FROM items WHERE id < 0").all(), VARIES);
  out.first = await outcome(() => select.first());
  out.first_no_rows = await outcome(() => db.prepare("SELECT id FROM items WHERE id < 0").first());
  out.first_column = await outcome(() => select.first("name"));
  out.first_column_no_rows = await outcome(() => db.prepare("SELECT id FROM items WHERE id < 0").first("id"));
  out.first_missing_column = await outcome(() => select.first("missing"));
  out.raw = await outcome(() => select.raw());
  out.raw_column_names = await outcome(() => select.raw({ columnNames: true }));
  out.raw_column_names_no_rows = await outcome(() =>
    db.prepare("SELECT id, name FROM items WHERE id < 0").raw({ columnNames: true }),
  );
  out.raw_no_rows = await outcome(() => db.prepare("SELECT id FROM items WHERE id < 0").raw());
  out.run_select = await outcome(() => select.run(), VARIES);
  out.update = await outcome(() => db.prepare("UPDATE items SET score = score + 1").run(), VARIES);
  out.delete_none = await outcome(() => db.prepare("DELETE FROM items WHERE id < 0").run(), VARIES);
  out.duplicate_columns = await outcome(() => db.prepare("SELECT 1 AS a, 2 AS a").all(), VARIES);
  out.duplicate_columns_raw = await outcome(() => db.prepare("SELECT 1 AS a, 2 AS a").raw());

  const value = (v) => outcome(() => db.prepare("SELECT ? AS v, typeof(?) AS t").bind(v, v).first());
  out.bind = {
    null: await value(null),
    undefined: await value(undefined),
    true: await value(true),
    false: await value(false),
    integer: await value(42),
    float: await value(0.5),
    whole_float: await value(3.0),
    integer_past_2_53: await value(2 ** 53 + 2),
    nan: await value(NaN),
    string: await value("text 日本 🎉"),
    bigint: await value(5n),
    uint8array: await value(new Uint8Array([1, 2])),
    arraybuffer: await value(new Uint8Array([1, 2]).buffer),
    array: await value([1, 2]),
    object: await value({ a: 1 }),
    date: await value(new Date(0)),
  };
  out.integer_past_2_53_literal = await outcome(() => db.prepare("SELECT 9007199254740993 AS v").first());
  out.bind_too_few = await outcome(() => db.prepare("SELECT ? AS a, ? AS b").bind(1).all(), VARIES);
  out.bind_too_many = await outcome(() => db.prepare("SELECT ? AS a").bind(1, 2).all(), VARIES);
  out.bind_named = await outcome(() => db.prepare("SELECT :x AS a").bind(1).all(), VARIES);
  out.prepare_syntax_error = outcomeSync(() => db.prepare("SELEC 1"));
  out.syntax_error = await outcome(() => db.prepare("SELEC 1").all(), VARIES);
  out.no_such_table = await outcome(() => db.prepare("SELECT * FROM missing").all(), VARIES);
  out.not_null = await outcome(() => db.prepare("INSERT INTO items (name) VALUES (NULL)").run(), VARIES);
  out.multiple_statements_in_prepare = await outcome(
    () => db.prepare("INSERT INTO other VALUES (2); SELECT x FROM other").all(),
    VARIES,
  );

  out.batch = await outcome(
    () =>
      db.batch([
        db.prepare("INSERT INTO items (name) VALUES (?)").bind("delta"),
        db.prepare("SELECT name FROM items WHERE name = ?").bind("delta"),
        db.prepare("UPDATE items SET note = 'n' WHERE name = 'delta'"),
      ]),
    VARIES,
  );
  out.batch_empty = await outcome(() => db.batch([]), VARIES);
  const before = (await db.prepare("SELECT count(*) AS n FROM items").first("n"));
  out.batch_with_error = await outcome(
    () =>
      db.batch([
        db.prepare("INSERT INTO items (name) VALUES (?)").bind("epsilon"),
        db.prepare("INSERT INTO missing VALUES (1)"),
      ]),
    VARIES,
  );
  const after = (await db.prepare("SELECT count(*) AS n FROM items").first("n"));
  out.batch_with_error_rolled_back = before === after;
  return out;
}
