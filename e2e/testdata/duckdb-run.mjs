// Runs each SQL query of a JSON array file with DuckDB and prints, for
// each, the query and its rows as JSON lines ("-- (no rows)" for none).
// Used by the e2e tests, which compare the output with golden files.
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const queries = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const instance = await DuckDBInstance.create(':memory:');
const con = await instance.connect();
for (const q of queries) {
  const reader = await con.runAndReadAll(q);
  const rows = reader.getRowObjectsJson();
  process.stdout.write('-- ' + q.trim().split('\n').join('\n-- ') + '\n');
  if (rows.length === 0) process.stdout.write('-- (no rows)\n');
  for (const r of rows) process.stdout.write(JSON.stringify(r) + '\n');
  process.stdout.write('\n');
}
