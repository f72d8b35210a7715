// Runs each SQL query of a JSON array file with DuckDB and prints, for
// each, the query and its rows as JSON lines. Used by the e2e tests.
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const queries = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const instance = await DuckDBInstance.create(':memory:');
const con = await instance.connect();
for (const q of queries) {
  const reader = await con.runAndReadAll(q);
  const rows = reader.getRowObjectsJson();
  if (rows.length === 0) {
    throw new Error('query returned no rows:\n' + q);
  }
  process.stdout.write('-- ' + q.trim().split('\n').join('\n-- ') + '\n');
  for (const r of rows) process.stdout.write(JSON.stringify(r) + '\n');
  process.stdout.write('\n');
}
