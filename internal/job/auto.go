package job

// The job's sizes chosen from its inputs when a flag leaves them
// automatic: band partitions, chunk size, the gather mode.

// Automatic partitions: one per PartitionText bytes of input text (a
// compressed file counting compressionEstimate times its size), at least
// MinPartitions, so that a reduce task holds about as many band records
// as a map task writes, whatever the corpus's size.
const (
	MinPartitions = 32
	PartitionText = 64 << 20
	maxPartitions = 99999
)

// AutoPartitions is the number of band partitions for inputs.
func AutoPartitions(inputs []Input) int {
	text := estimatedText(inputs)
	return int(min(max(int64(MinPartitions), (text+PartitionText-1)/PartitionText), maxPartitions))
}

// Automatic chunks (--chunk-bytes 0): the inputs cut into about
// MinChunks map tasks, each of MinChunkBytes to MaxChunkBytes of text. A
// small job keeps tasks enough for every core; a large one packs whole
// compressed files into tasks of up to MaxChunkBytes, so that its index
// holds one text store per MaxChunkBytes of text, not one per file. A
// chunk's text store holds about a fifth to a quarter of its text (zstd
// frames of 8 MiB, measured on the generated corpora), so a large job's
// stores stay above 50 MB each, issue 21's bound for index/'s files, only
// with chunks of 200-250 MB of text and more: hence ten tasks, of up to 512 MiB
// (where a compressed input byte counts as 4, about 2.2 in the generated
// gzipped corpora). The cluster stage's partition blocks
// (cluster.partBlockBits, 262,144 documents) hold such a chunk whole.
const (
	MinChunks     = 10
	MinChunkBytes = 32 << 20
	MaxChunkBytes = 512 << 20
	// RunText is the most text whose band records a map task holds in
	// memory: a larger chunk writes them in runs of about RunText.
	RunText = 32 << 20
)

// RunBytes is the text whose band records a map task holds before it
// writes them as a run: ChunkBytes, at most RunText (and RunText while
// ChunkBytes is still automatic).
func (p InputParams) RunBytes() int64 {
	if p.ChunkBytes <= 0 {
		return RunText
	}
	return min(p.ChunkBytes, RunText)
}

// AutoChunkBytes is the text per map task for inputs.
func AutoChunkBytes(inputs []Input) int64 {
	text := estimatedText(inputs)
	return min(max(MinChunkBytes, (text+MinChunks-1)/MinChunks), MaxChunkBytes)
}

// GatherText is the input text above which AutoGather turns the gather
// stage on: about two chunks (--chunk-bytes 32 MiB). Chunks store their
// documents' text in zstd frames (index version 3): without gather,
// each verify task decodes the frames holding the documents its pairs
// name, which in a job of C chunks is nearly every frame, C times over
// (100k corpus, 10 chunks: 12.25 s of CPU against 10.54 with gather);
// the gather stage decodes each frame once.
const GatherText = 64 << 20

// SetsText is the input text up to which AutoGather chooses GatherSets:
// its work files (each document's 64-bit shingle set and signature, about
// 1.7 bytes a byte of text: 1.7 GiB here) stay in the page cache of a
// machine of a few GiB, and verify reads them instead of decoding and
// sketching its candidates' texts again (the 100k corpus: about 1.5 s of
// a job's 7.7 s of CPU, docs/performance.md).
const SetsText = 1 << 30

// AutoGather resolves --gather auto: GatherOn for an output in object
// storage (where a random read is a request), a job matched against
// earlier ones (whose chunks have no set files: the gather stage decodes
// each of their text stores' frames once, where every verify task would
// decode those holding its documents) or inputs of more than SetsText
// bytes of text (a compressed input byte counting compressionEstimate),
// else GatherSets. GatherOff, reading the text stores by random access,
// is never chosen: above GatherText bytes of text it decodes their frames
// many times over.
func AutoGather(inputs []Input, remoteOut, against bool) Gather {
	if remoteOut || against || estimatedText(inputs) > SetsText {
		return GatherOn
	}
	return GatherSets
}

// estimatedText is the text of inputs, a compressed byte counting
// compressionEstimate.
func estimatedText(inputs []Input) int64 {
	var text int64
	for _, in := range inputs {
		n := in.Size
		if in.compressed() {
			n *= compressionEstimate
		}
		text += n
	}
	return text
}
