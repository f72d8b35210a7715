// Prints each row of a SQL query's result as one line: its first column,
// a JSON text (the tests select to_json(t) of every row). Used by
// test_rows.py to read the job's Parquet files with DuckDB.
import { DuckDBInstance } from '@duckdb/node-api';

const instance = await DuckDBInstance.create(':memory:');
const con = await instance.connect();
const reader = await con.runAndReadAll(process.argv[2]);
for (const row of reader.getRows()) process.stdout.write(String(row[0]) + '\n');
