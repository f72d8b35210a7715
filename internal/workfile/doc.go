// Package workfile reads and writes the work files that carry records
// from one stage of a job to the next inside its work area (_work/):
// band runs (map to reduce), edge files and other runs of rows (reduce to
// verify, and between the cluster stage's steps), request files (reduce
// to gather), gather files (gather to verify), and verified pairs and
// members (verify to cluster). None of them is an output: each is
// private to the build that writes it and the stage that reads it. The
// package also holds the sort kernels and the
// k-way merges the stages use on their records.
//
// Every reader checks a file, or a range of one, against what its writer
// recorded in the fileinfo.Info it handed on (size, rows, xxhash), and
// checks that its bytes decode as their format, before it hands out a
// row of it (except where said below). A file that fails is an error
// that wraps [ErrCorrupt] and names the file and where in it (an offset,
// a range, a row); a reader never panics on one, and never allocates for
// a count it read before checking the count against the bytes that must
// hold it (but for the earlier Parquet files' pages, below). The fuzz
// tests (fuzz_test.go) check this for every reader.
//
// The layouts below use this notation: u32, u64, i32 and i64 are fixed
// width, little-endian; uvarint and varint are encoding/binary's (varint
// zigzag-encoded); string(s) is uvarint(len(s)) then the bytes of s;
// xxhash(...) is XXH64 with seed 0 (github.com/cespare/xxhash/v2) of the
// bytes named. A document ordinal is chunk<<32 | the document's index in
// its chunk (job.Ordinal).
//
// # Ranges
//
// Edge files, request files, runs of rows and gather files are read by
// range: the writer returns, for each key (a chunk, a partition), a
// fileinfo.Info naming the file, the range's Offset and Bytes, its Rows
// and the xxhash of its bytes; a range's reader checks that the range
// lies inside the file, that its xxhash and row count are those, and
// (for fixed-size records) that Bytes is Rows records.
//
// # Band runs (NDBRUN1)
//
// One run of one chunk's band records, for every partition:
// job.BandRunWorkFile(chunk, run), written by the map task of the chunk
// ([WriteBandRun]), read by each reduce task by ranged reads of the
// blocks of its partitions ([LoadBandRun], [BandRunReader.Part]).
//
//	magic    "NDBRUN1\n"
//	blocks   one per partition with records, by partition ascending;
//	         each record, sorted by (band, key, doc):
//	           uvarint(band - the previous record's band; 0 at the first)
//	           uvarint(key - the previous key, mod 2^64; the previous key
//	             is math.MinInt64 at the start of a band)
//	           uvarint(the document's index in the chunk)
//	           i64 the shingle set's fingerprint (its high 64 bits)
//	footer   uvarint(blocks), then per block: uvarint(partition),
//	         uvarint(offset), uvarint(bytes), uvarint(records),
//	         u64 xxhash(the block's bytes)
//	trailer  u64 the footer's offset, u64 xxhash(footer), the magic again
//
// Checked when read: the file's size is the Info's; the trailer's magic;
// the footer lies between the magic and the trailer and matches its
// xxhash; the blocks its count claims fit in it (12 bytes an entry at
// least); the blocks follow each other from the magic to the footer, by
// partition strictly ascending, and hold Info.Rows records in all. A
// block, when its partition is asked for, matches its xxhash, claims no
// more records than fit in it (11 bytes a record at least), and decodes
// to exactly its records and bytes (each band step below 2^31, each
// index below 2^32). The records' order is checked by their reader (the
// reduce stage's merge), not here. About 19 bytes a record, against 36.5
// for a records.BandRecord in Parquet.
//
// # Edge files
//
// Candidate pairs and exact-group claims, from reduce to verify:
// job.EdgeFile(partition), one per reduce partition ([WriteEdges]), read
// by the verify task of each chunk ([ReadEdges], [MergeEdges]). The
// cluster stage's steps use the same records for their label and edge
// runs, keyed by partition ([WriteEdgeRuns]).
//
//	runs     one per chunk of a (per key), each sorted by (a, b, band):
//	         20-byte records: i64 a, i64 b, i32 band
//	         (band ClaimBand, -1: a claims document b for the exact group
//	         represented by a)
//
// Checked when read: as a range (see Ranges), 20 bytes a row.
// [MergeEdges] checks each range's xxhash in a first pass before it
// hands out any of its edges, then streams it.
//
// # Runs of rows
//
// The general form of edge and request files ([WriteRuns], [ReadRun]):
// a file of runs, one per key, each the rows of that key encoded one
// after the other by the writer's function and decoded by the reader's,
// which returns the bytes a row used (0: it does not decode). The cluster
// stage's rows and lookups are such runs, their fields written as
// varint(number) and string(s) ([AppendString], read by [RowDecoder]).
//
//	runs     one per key: row, row, ... (each as its writer encodes it)
//
// Checked when read: as a range (see Ranges); every row decodes, the last
// ending at the range's end, and there are Info.Rows of them.
//
// # Request files
//
// What each verify task needs of each chunk's signatures, from reduce to
// gather: job.RequestFile(partition), one per reduce partition
// ([WriteRequests], [ReadRequests]).
//
//	runs     one per chunk of the requested document, each sorted by
//	         (verify chunk, document) without repeats: 12-byte records:
//	         i64 the document's ordinal, i32 the verify task's chunk
//
// Checked when read: as a range (see Ranges), 12 bytes a row.
//
// # Gather files
//
// The signature records a chunk's gather task read for every verify
// task, from gather to verify: job.GatherFile(chunk) ([GroupRanges],
// [AppendGathered]), read by the verify task of each chunk
// ([ReadGathered], [GatheredReader]) into a [Scratch], which indexes
// them by document in memory and holds them in memory, in a temporary
// file, or where they are in local gather files.
//
//	ranges   one per verify chunk, ascending, each sorted by document:
//	         i64 the document's ordinal
//	         i32 the verify task's chunk
//	         uvarint(n), then the document's signature record, n bytes
//	           (package index's format; opaque here)
//
// Checked when read: the range lies inside the file; each record's
// length is at most the range's size and its bytes are there; each
// record is for the chunk reading it; documents strictly ascending; the
// range holds Info.Rows records and matches its xxhash (checked at its
// end: a range that fails leaves nothing to read). A signature record's
// own checks are its reader's. The ranges' sizes, as their writers
// recorded them, size the Scratch before the ranges are checked against
// their files: at most 8 MiB is allocated for it (beyond, it is a
// temporary file).
//
// # Verified pairs (NDVPAIR1) and members (NDVMEMB1)
//
// A verify task's verified pairs (records.Pair) and its confirmed
// exact-group members (records.ExactMember), from verify to cluster:
// job.VerifiedFile(chunk) and job.MembersFile(chunk) ([VerifiedWriter],
// [ReadVerifiedPairs], [ReadVerifiedMembers], [ReadVerifiedEnds]). A file
// exists only if it has rows. Each row names two documents, sorted by
// (first, second), without repeats: a pair's a and b, a member's group
// and doc. A document's id and url, which repeat in each of its rows (a
// page of a template family is in hundreds of pairs), are stored once, in
// the file's table of documents: the steps that read only the rows'
// documents decode no string, and the expansion decodes rows without
// parquet-go.
//
//	magic    "NDVPAIR1" (pairs) or "NDVMEMB1" (members)
//	blocks   of at most 65,536 rows, each:
//	  header   u64 xxhash(the rest of the block: the sizes and the
//	           payload), u32 the payload's size, u32 its rows
//	  payload  uvarint(size of ends), ends, values
//	  ends     per row, the indexes in the table of its two documents, i
//	           and j: varint(i - the previous row's i; 0 before a block's
//	           first), varint(j - i)
//	  values   for members, nothing; for pairs:
//	           the block's kinds: uvarint(kinds), then per kind
//	             string(method) and a byte, 1 if hamming is not null
//	           the block's estimates: uvarint(estimates), then per
//	             estimate u64 its float64 bits
//	           per row: a byte, its low 4 bits the number n of leading
//	             bytes of the similarity's float64 bits that follow (the
//	             others are 0), its high 4 the kind's index (15:
//	             uvarint(index) follows); those n bytes, most significant
//	             first; uvarint(the estimate's index); uvarint(hamming) if
//	             the kind has it; uvarint(bands_collided);
//	             uvarint(first_band)
//	table    the documents, by index (in the order of their first use):
//	  docs     per document varint(its ordinal's high 32 bits - the
//	           previous document's), uvarint(its low 32 bits)
//	  strings  one zstd frame of string(id) of every document, then
//	           string(url) of every document
//	trailer  64 bytes: u64 the table's offset, u64 documents, u64 the
//	         size of docs, u64 the size of the strings decoded, u64 the
//	         size stored, u64 rows, u64 xxhash(docs, the strings stored
//	         and the trailer before it), the magic again
//
// Checked when read: the file's size is the Info's; the magic at both
// ends is of the kind asked for; the table lies between the magic and the
// trailer, fills it exactly and matches its xxhash; the trailer's rows
// are Info.Rows; the strings decoded are at least 2 bytes a document and
// at most 32,768 times their stored size; when a reader uses them
// ([ReadVerifiedEnds] does not), they decode into a buffer of that size
// (a frame that claims more fails before anything is allocated for it),
// to exactly that size and 2 strings a document;
// each block, before any of its rows is used, lies before the table,
// matches its xxhash, has rows, does not take the file past Info.Rows,
// and decodes exactly: indexes inside the table, rows in (first,
// second) order after the last block's, values in their ranges; at the
// last block, the rows are Info.Rows and the whole file matches
// Info.Checksum (a foreign file of the same size and rows fails there,
// after its rows were handed out, as pqfile's readers fail). A pair
// takes about 12 bytes on the templated corpus at 0.5 (Parquet with zstd
// and dictionaries: 21), 57 on the 100k benchmark corpus (59), where few
// pairs share a document.
//
// # Earlier verified files (Parquet)
//
// Verify tasks of builds before 2026-11-27 wrote their verified pairs and
// members as Parquet (_work/verified/chunk-C.parquet, rows of
// records.Pair and records.ExactMember). A job such a build ran through
// its verify stage and this one resumes still holds them, and its
// recorded results name them: the readers of verified files read a file
// whose name ends in .parquet as such (package pqfile), rather than fail
// the job for a format it did not choose. Checked when read as pqfile
// checks a file: its size and xxhash before it is opened, its rows at its
// end; a file that fails those wraps pqfile.ErrCorrupt, not ErrCorrupt.
// One that passes them but is not a Parquet file parquet-go reads fails
// with parquet-go's error, or, where parquet-go panics on it or its
// footer's length does not fit in it, with one wrapping pqfile.ErrCorrupt.
// What reading one allocates is parquet-go's, bounded by the file's size
// for its footer only: a page header's claimed sizes are allocated before
// the page is read (a forged file of 3 KB took 1.3 GB).
package workfile
